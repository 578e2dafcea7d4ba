"""A tokenizer of the maze vocabulary and a causal LM of mazerl's transformer shape, built
locally (nothing is downloaded): the paper's Maze model is such a pair (MaxRL's tokenizer,
vocabulary 32, and a 4-layer Qwen2 of hidden 256).

The model is a `LlamaForCausalLM` with biased attention projections, the Qwen2 architecture
but for a bias on the output projection (zero-initialised): transformers 5's `AutoTokenizer`
loads any folder whose config says `qwen2` with its `Qwen2Tokenizer` (a byte-level BPE), which
reads the word-level vocabulary wrong (a whole prompt becomes one token, silently), whereas
beside a `llama` config it loads the saved `tokenizer.json` as it is. `reloads_right` checks a
saved folder for that; MaxRL's released checkpoint is a `qwen2` folder, which `mazerl-llm`
loads with `PreTrainedTokenizerFast` (`apps.llm.load_model`).
"""

from mazerl.policy.tokens import VOCAB
from mazerl.policy.transformer import TransformerConfig

# a conversation's messages as they are: a chat prompt of a `maxrl` export renders to its text
CHAT_TEMPLATE = "{% for message in messages %}{{ message['content'] }}{% endfor %}"
PROBE = "<bos> GRID_START START PATH NEWLINE WALL GOAL GRID_END PATH_START RIGHT DOWN DONE"


def maze_tokenizer():
    """A `PreTrainedTokenizerFast` over `mazerl.policy.tokens.VOCAB` (MaxRL's): one token per
    whitespace-separated word, ids as in mazerl, and a chat template that renders a
    conversation's messages as they are (verl's `RLHFDataset` and TRL's conversational prompts
    need one).

    One spelling per answer: every token but `<eos>` decodes to a visible word (`"\\n"`, id 17,
    as `<newline>`) and decoding joins them with single spaces, so a completion that succeeds
    starts with the tokens of a route's moves, whatever the decoding skips. Hence only `<eos>`
    is a special token (the padding token too); `<pad>`, `<bos>`, `<unk>` are plain words,
    which the verifier reads as stop words: a completion with one of them before the goal
    fails."""
    from tokenizers import Tokenizer, decoders
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import WhitespaceSplit
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(WordLevel({w: i for i, w in enumerate(VOCAB)}, unk_token="<unk>"))
    core.pre_tokenizer = WhitespaceSplit()
    core.decoder = decoders.Sequence(
        [decoders.Replace("\n", "<newline>"), decoders.WordPiece(prefix="##", cleanup=False)]
    )  # WordPiece without "##" tokens: join with single spaces
    core.add_special_tokens(["<eos>"])
    return PreTrainedTokenizerFast(
        tokenizer_object=core, eos_token="<eos>", pad_token="<eos>", chat_template=CHAT_TEMPLATE
    )


def llama_config(policy: TransformerConfig | None = None):
    """A `LlamaConfig` of the shape of mazerl's transformer policy (layers, width, heads, KV
    heads, FFN width, RoPE theta; default: the CPU-size `policy=transformer`), over the maze
    vocabulary, tied embeddings, RMSNorm, SiLU-gated FFN, biased attention projections."""
    from transformers import LlamaConfig

    p = policy or TransformerConfig()
    return LlamaConfig(
        vocab_size=len(VOCAB),
        hidden_size=p.hidden,
        intermediate_size=p.ffn,
        num_hidden_layers=p.layers,
        num_attention_heads=p.heads,
        num_key_value_heads=p.kv_heads,
        rope_theta=p.rope_theta,
        max_position_embeddings=4096,
        rms_norm_eps=1e-6,
        attention_bias=True,
        tie_word_embeddings=True,
        bos_token_id=VOCAB.index("<bos>"),
        eos_token_id=VOCAB.index("<eos>"),
        pad_token_id=None,  # the tokenizer pads with <eos>; no embedding row is frozen
    )


def tiny_model(policy: TransformerConfig | None = None, seed: int = 0):
    """A randomly initialised `LlamaForCausalLM` of `llama_config(policy)`, seeded."""
    import torch
    from transformers import LlamaForCausalLM

    torch.manual_seed(seed)
    return LlamaForCausalLM(llama_config(policy))


def reloads_right(folder: str, tokenizer) -> bool:
    """Whether `AutoTokenizer.from_pretrained(folder)` encodes a maze prompt and answer as
    `tokenizer` does (False for the maze tokenizer saved beside a `qwen2` config)."""
    from transformers import AutoTokenizer

    reloaded = AutoTokenizer.from_pretrained(folder)
    encode = dict(add_special_tokens=False)
    return reloaded(PROBE, **encode)["input_ids"] == tokenizer(PROBE, **encode)["input_ids"]
