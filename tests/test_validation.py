"""Every setting has a range next to its schema; every bad value is one line naming the key,
exit 2, no traceback, no run dir; schema defaults equal the YAML's; registered functions
refuse arguments they do not take."""

import dataclasses
import math
import re

import pytest
import torch
from conftest import FAST, run_app
from hydra import compose, initialize_config_dir
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from omegaconf import OmegaConf, open_dict
from omegaconf.errors import ConfigTypeError, ValidationError

from mazerl.algos import AlgoConfig, policy_loss
from mazerl.apps.schema import Config, register_configs, validate
from mazerl.categorical.config import CategoricalConfig, SimConfig
from mazerl.core.config import CONF_DIR
from mazerl.core.errors import ConfigError, UserError
from mazerl.core.registry import Registry
from mazerl.core.settings import Rule


def schemas(root: type) -> set[type]:
    """`root` and every schema dataclass below it (sections, lists of sections, policies)."""
    found, todo = set(), [root]
    while todo:
        cls = todo.pop()
        found.add(cls)
        for f in dataclasses.fields(cls):
            default = f.default_factory() if f.default_factory is not dataclasses.MISSING else None
            below = [default] if dataclasses.is_dataclass(default) else list(default or [])
            todo += [type(x) for x in below if dataclasses.is_dataclass(x) and type(x) not in found]
    return found


def registered_schemas() -> set[type]:
    """Every config class registered in Hydra's ConfigStore (under `schema/`), and every
    config class below one (sections, lists of sections)."""
    from hydra.core.config_store import ConfigStore

    register_configs()
    found, todo = set(), [ConfigStore.instance().repo["schema"]]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            todo += node.values()
        else:
            found |= schemas(OmegaConf.get_type(node.node))
    return found


def test_every_field_of_every_registered_config_has_a_rule_and_a_description():
    from mazerl.policy import POLICIES

    every = registered_schemas()
    policies = {POLICIES.get(n).config_class for n in POLICIES.names()}
    assert policies <= every and {SimConfig, Config, CategoricalConfig} <= every
    assert len(every) >= 14
    for cls in every:
        for f in dataclasses.fields(cls):
            where = f"{cls.__name__}.{f.name}"
            assert isinstance(f.metadata.get("rule"), Rule), f"{where} has no rule"
            text = f.metadata.get("help")
            assert isinstance(text, str) and text.strip() and "\n" not in text, where


def test_a_field_without_a_rule_is_refused_by_the_walker():
    @dataclasses.dataclass
    class Bare:
        count: int = 3

    with pytest.raises(TypeError, match="Bare: fields without a rule: count"):
        validate(OmegaConf.structured(Bare), Bare)


YAML_OF_SCHEMA = {
    "maze/default": "maze",
    "train/default": "train",
    "eval/default": "eval",
    "logger/default": "logger",
    "policy/gru": "policy",
    "algo/grpo": "algo",
    "focal/fgrpo": "focal",
}


def test_schema_defaults_equal_the_yaml_values():
    """A config section composed from its YAML equals the schema's defaults (the YAML is what
    runs: `iterations` 300, GRU `hidden` 64, `base.target_pass1` 0.3, the three eval sets)."""
    from mazerl.policy.gru import GruConfig
    from mazerl.policy.transformer import TransformerConfig

    main = {f.name: f for f in dataclasses.fields(Config)}
    pairs = [(name, main[key].default_factory) for name, key in YAML_OF_SCHEMA.items()]
    pairs += [("policy/gru", GruConfig), ("policy/transformer", TransformerConfig)]
    for name, cls in pairs:
        if cls is dataclasses.MISSING:  # `policy` is chosen by name: checked just above
            continue
        values = OmegaConf.load(CONF_DIR / f"{name}.yaml")
        values.pop("defaults", None)
        if name == "algo/grpo":  # the schema shows a method by its name; GRPO's file names it
            assert values.pop("label") == "[F-]GRPO[ γ {gamma}]"
        schema = OmegaConf.structured(cls)
        assert OmegaConf.merge(schema, values) == schema, name
    top = OmegaConf.load(CONF_DIR / "config.yaml")
    schema = OmegaConf.structured(Config)
    assert OmegaConf.merge(schema.base, top.base) == schema.base
    assert {k: schema[k] for k in ("seed", "device", "threads")} == {
        k: top[k] for k in ("seed", "device", "threads")
    }
    sim = OmegaConf.structured(SimConfig)
    assert OmegaConf.merge(sim, OmegaConf.load(CONF_DIR / "categorical.yaml").sim) == sim
    assert sim.lr == 0.3 and schema.train.iterations == 300 and schema.base.target_pass1 == 0.3


@pytest.fixture(scope="module")
def composed():
    register_configs()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        train = compose("config", overrides=["experiment=smoke"])
        transformer = compose("config", overrides=["experiment=smoke", "policy=transformer"])
        categorical = compose("categorical")
    return {"train": train, "transformer": transformer, "categorical": categorical}


def leaves(cfg, prefix=""):
    """Every leaf key of a config (list elements by index, as Hydra overrides address them)."""
    items = cfg.items() if OmegaConf.is_dict(cfg) else enumerate(cfg)
    for k, v in items:
        key = f"{prefix}{k}"
        if OmegaConf.is_config(v) and len(v) and k != "loss_kwargs":
            yield from leaves(v, f"{key}.")
        else:
            yield key


BAD = [math.nan, math.inf, -math.inf, -1, 0, -1e9, 10**12, "", "nope", [], [0], None, 0.5]


def test_every_numeric_field_refuses_nan_and_inf(composed):
    for app, cfg in composed.items():
        schema = CategoricalConfig if app == "categorical" else Config
        validate(cfg, schema)  # the defaults are valid
        for key in leaves(cfg):
            value = OmegaConf.select(cfg, key)
            if isinstance(value, bool) or not isinstance(value, int | float):
                continue
            for bad in (math.nan, math.inf, -math.inf):
                c = cfg.copy()
                try:
                    OmegaConf.update(c, key, bad)
                except ValidationError:  # an int field: Hydra's own type check refuses it
                    continue
                named = key.rsplit(".", 1)[0] if key.split(".")[-1].isdigit() else key
                with pytest.raises(ConfigError, match=rf"^{re.escape(named)} must be .*{bad}"):
                    validate(c, schema)


@settings(
    max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True
)
@given(data=st.data())
def test_a_drawn_bad_value_is_one_line_naming_the_key(composed, data):
    app = data.draw(st.sampled_from(sorted(composed)))
    cfg = composed[app].copy()
    schema = CategoricalConfig if app == "categorical" else Config
    key = data.draw(st.sampled_from(sorted(leaves(cfg))))
    bad = data.draw(st.sampled_from(BAD))
    try:
        with open_dict(cfg):
            OmegaConf.update(cfg, key, bad)
    except (ValidationError, ConfigTypeError):
        return  # refused by the schema's types (Hydra's message at composition)
    try:
        validate(cfg, schema)
    except UserError as e:
        message = str(e)
        assert "\n" not in message
        section = key.split(".")[0]
        assert message.startswith(section) or message.startswith(f"{bad}:"), (key, bad, message)
    else:  # accepted: never nan, inf or an empty string, whatever the key
        stored = OmegaConf.select(cfg, key)  # a str field stores nan as "nan"
        assert stored != "" and not (isinstance(stored, float) and not math.isfinite(stored))


# the issue's examples: once a traceback or a silent accept, each now one line and exit 2
ISSUE_EXAMPLES = [
    ("train.checkpoint_every=0", "train.checkpoint_every must be >= 1, got 0"),
    ("train.weight_decay=-1", "train.weight_decay must be >= 0 and finite, got -1.0"),
    ("base.lr=-1", "base.lr must be > 0 and finite, got -1.0"),
    ("seed=-1", "seed must be in [0, 4294967295], got -1"),
    ("eval.sets=[]", "eval.sets must be a non-empty list of sections, got []"),
    ("policy.hidden=0", "policy.hidden must be >= 1, got 0"),
    ("focal.gamma=inf", "focal.gamma must be >= 0 and finite, got inf"),
    ("train.lr=inf", "train.lr must be > 0 and finite, got inf"),
    ("eval.exact_ks=[0]", "eval.exact_ks must be a non-empty list of values >= 1, got [0]"),
    ("train.eval_every=-1", "train.eval_every must be >= 0, got -1"),
    ("train.warmup=-5", "train.warmup must be >= 0, got -5"),
    ("eval.batch_rollouts=0", "eval.batch_rollouts must be >= 1, got 0"),
    ("train.budget_reference_group_size=0", "train.budget_reference_group_size must be >= 2"),
    ("+algo.loss_kwargs.clip_hgih=0.5", "policy loss 'clip' takes no argument 'clip_hgih'"),
]


@pytest.mark.parametrize(
    ("override", "message"), ISSUE_EXAMPLES, ids=[o for o, _ in ISSUE_EXAMPLES]
)
def test_issue_examples_in_process(composed, override, message):
    register_configs()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=["experiment=smoke", override])
    with pytest.raises(ConfigError) as e:
        validate(cfg)
    assert message in str(e.value)


@pytest.mark.parametrize(
    ("app", "override", "message"),
    [
        ("mazerl.apps.train", "train.lr=inf", "error: train.lr must be > 0 and finite, got inf"),
        ("mazerl.apps.train", "eval.sets=[]", "error: eval.sets must be a non-empty list"),
        ("mazerl.apps.categorical", "sim.lr=nan", "error: sim.lr must be > 0 and finite, got nan"),
        (
            "mazerl.apps.train",
            "base.cache_dir=/dev/null/cache",
            "error: base.cache_dir=/dev/null/cache cannot be used as the cache folder: "
            "Not a directory",
        ),
    ],
)
def test_bad_value_on_the_command_line_leaves_no_run_dir(tmp_path, app, override, message):
    args = [*FAST] if app.endswith("train") else ["threads=1"]
    out = run_app(app, *args, f"hydra.run.dir={tmp_path}/run", override, cwd=tmp_path, timeout=90)
    assert out.returncode == 2
    assert out.stderr.strip() == message or out.stderr.startswith(message), out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr
    assert not (tmp_path / "run").exists()


def test_registered_function_refuses_unknown_keyword_arguments():
    reg = Registry("thing")
    reg.register("f")(lambda x, *, scale=1.0: x * scale)
    assert reg.call("f", 2, scale=3.0) == 6.0
    with pytest.raises(
        ConfigError, match=r"^thing 'f' takes no argument 'scal'; its parameters: x, scale$"
    ):
        reg.call("f", 2, scal=3.0)
    algo = AlgoConfig(loss_kwargs={"clip_hgih": 0.5})
    t = torch.zeros(2, 3)
    with pytest.raises(ConfigError, match="policy loss 'clip' takes no argument 'clip_hgih'"):
        policy_loss(algo, logp=t, old_logp=t, advantages=torch.ones(2), mask=torch.ones(2, 3))
    # the linear loss has no clip: it is not given one, and takes the KL term as the others
    linear = AlgoConfig(loss="linear", kl_beta=0.5)
    loss, metrics = policy_loss(
        linear, logp=t, old_logp=t, advantages=torch.ones(2), mask=torch.ones(2, 3),
        ref_logp=torch.full((2, 3), -1.0),
    )  # fmt: skip
    # -A pi = -1 per token, plus 0.5 * k3(logp=0, ref=-1) = 0.5 * (e^-1 + 1 - 1)
    assert loss.item() == pytest.approx(-1 + 0.5 * math.exp(-1))
    assert metrics["kl_ref"].item() == pytest.approx(math.exp(-1))
