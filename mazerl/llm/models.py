"""A tokenizer of the maze vocabulary and a Qwen2-style causal LM of mazerl's transformer shape,
built locally (nothing is downloaded): the paper's Maze model is such a pair (MaxRL's
tokenizer, vocabulary 32, and a 4-layer Qwen2 of hidden 256).
"""

from mazerl.policy.tokens import VOCAB
from mazerl.policy.transformer import TransformerConfig

SPECIAL = ("<pad>", "<bos>", "<eos>", "<unk>")


def maze_tokenizer():
    """A `PreTrainedTokenizerFast` over `mazerl.policy.tokens.VOCAB` (MaxRL's): one token per
    whitespace-separated word, ids as in mazerl; `<pad>`, `<bos>`, `<eos>`, `<unk>` special.
    Every word is one token and decoding joins tokens with single spaces, so each maze answer
    has exactly one tokenization."""
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import WhitespaceSplit
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(WordLevel({w: i for i, w in enumerate(VOCAB)}, unk_token="<unk>"))
    core.pre_tokenizer = WhitespaceSplit()
    core.add_special_tokens(list(SPECIAL))
    return PreTrainedTokenizerFast(
        tokenizer_object=core,
        pad_token="<pad>",
        bos_token="<bos>",
        eos_token="<eos>",
        unk_token="<unk>",
    )


def qwen2_config(policy: TransformerConfig | None = None):
    """A `Qwen2Config` of the shape of mazerl's transformer policy (layers, width, heads, KV
    heads, FFN width, RoPE theta; default: the CPU-size `policy=transformer`), over the maze
    vocabulary, tied embeddings, RMSNorm, SiLU-gated FFN, as the paper's Maze model."""
    from transformers import Qwen2Config

    p = policy or TransformerConfig()
    return Qwen2Config(
        vocab_size=len(VOCAB),
        hidden_size=p.hidden,
        intermediate_size=p.ffn,
        num_hidden_layers=p.layers,
        num_attention_heads=p.heads,
        num_key_value_heads=p.kv_heads,
        rope_theta=p.rope_theta,
        max_position_embeddings=4096,
        tie_word_embeddings=True,
        pad_token_id=VOCAB.index("<pad>"),
        bos_token_id=VOCAB.index("<bos>"),
        eos_token_id=VOCAB.index("<eos>"),
    )


def tiny_model(policy: TransformerConfig | None = None, seed: int = 0):
    """A randomly initialised `Qwen2ForCausalLM` of `qwen2_config(policy)`, seeded."""
    import torch
    from transformers import Qwen2ForCausalLM

    torch.manual_seed(seed)
    return Qwen2ForCausalLM(qwen2_config(policy))
