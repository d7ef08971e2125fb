"""load_model's choices and errors, a classifier pipeline as reward, and a reward failing mid-run."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from textrl import ConfigError, OnlineTrainer, RewardError, load_model, reward_fn
from textrl.data import from_list
from textrl.rewards import ClassifierReward

from .conftest import fast

pytestmark = pytest.mark.slow


def test_lora_policy_has_no_reference(tiny: Path) -> None:
    model, _, ref = load_model(str(tiny), peft={"type": "lora", "r": 4, "target_modules": ["q_proj", "v_proj"]})
    assert ref is None and type(model).__name__.startswith("Peft")
    trainable = [n for n, p in model.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in n for n in trainable)
    assert model.peft_config["default"].lora_alpha == 8  # None means 2 x r


def test_random_starting_weights_come_from_the_seed(tiny: Path) -> None:
    """A LoRA adapter's A matrices and a new reward head are drawn at random. Two loads with the same seed give the
    same weights whatever the caller's random state (as two TRL runs with the same args.seed do, and as the
    reference cache needs to recognise the second run); another seed gives others; the caller's state is untouched."""
    import torch

    lora = {"type": "lora", "r": 4, "target_modules": ["q_proj", "v_proj"]}

    def adapter(seed: int) -> dict[str, Any]:
        model, _, _ = load_model(str(tiny), peft=lora, seed=seed)
        return {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}

    torch.manual_seed(1)
    before = torch.get_rng_state()
    first = adapter(7)
    assert torch.equal(torch.get_rng_state(), before)
    torch.rand(1000)  # the state another process would be in
    second, other = adapter(7), adapter(8)
    assert first.keys() == second.keys() and any("lora_A" in n for n in first)
    assert all(torch.equal(first[n], second[n]) for n in first)
    assert any(not torch.equal(first[n], other[n]) for n in first if "lora_A" in n)

    def head(seed: int) -> Any:
        model, _, _ = load_model(str(tiny), load_ref=False, task="reward", seed=seed)
        return model.score.weight.detach().clone()

    assert torch.equal(head(7), head(7)) and not torch.equal(head(7), head(8))


def test_full_policy_gets_a_frozen_reference(tiny: Path) -> None:
    model, _, ref = load_model(str(tiny))
    assert ref is not None and not ref.training and not any(p.requires_grad for p in ref.parameters())
    assert model is not ref


def test_reward_checkpoint_loads_a_classifier_head(tiny_rm: Path) -> None:
    model, _, ref = load_model(str(tiny_rm), load_ref=False)
    assert type(model).__name__ == "LlamaForSequenceClassification" and ref is None
    assert model.config.num_labels == 1


def test_tokenizer_without_pad_gets_eos(tiny: Path, tmp_path: Path) -> None:
    from transformers import AutoTokenizer

    copy = tmp_path / "nopad"
    shutil.copytree(tiny, copy)
    tok = AutoTokenizer.from_pretrained(copy)
    tok.pad_token = None
    tok.save_pretrained(copy)
    assert AutoTokenizer.from_pretrained(copy).pad_token is None
    _, loaded, _ = load_model(str(copy), load_ref=False)
    assert loaded.pad_token == loaded.eos_token == "<|im_end|>"


@pytest.mark.parametrize(
    ("peft", "match"),
    [
        ({"type": "lora", "r": 0}, r"peft\.r: Input should be greater than or equal to 1; got 0"),
        ({"type": "lora", "rank": 8}, r"peft\.rank: Extra inputs are not permitted"),
        ({"type": "lora", "alhpa": 8}, r"peft\.alhpa: Extra inputs are not permitted; got 8\. Did you mean 'alpha'\?"),
        ({"type": "ia3"}, r"peft\.type: Input should be 'lora'; got 'ia3'"),
        ("lora", r"peft: got str; allowed: a mapping such as \{'type': 'lora', 'r': 16\}"),
    ],
)
def test_bad_peft_is_named(tiny: Path, peft: Any, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        load_model(str(tiny), peft=peft)


def test_quantization_needs_an_adapter(tiny: Path) -> None:
    with pytest.raises(ConfigError, match=r"quantization: got '8bit' without peft: quantized weights are frozen.*"
                                          r"Fix: pass peft=\{'type': 'lora', 'r': 16\}"):  # fmt: skip
        load_model(str(tiny), quantization="8bit")


def test_bad_dtype(tiny: Path) -> None:
    with pytest.raises(ConfigError, match=r"torch_dtype: got 'fp8'; allowed: 'auto', 'bfloat16', 'float16', 'float32'"):
        load_model(str(tiny), torch_dtype="fp8")
    model, _, _ = load_model(str(tiny), torch_dtype="float32", load_ref=False)
    assert str(model.dtype) == "torch.float32"


def test_classifier_pipeline_as_reward(tiny_rm: Path) -> None:
    from transformers import pipeline

    clf = pipeline("text-classification", model=str(tiny_rm), tokenizer=str(tiny_rm))
    reward = ClassifierReward(clf, target_label="LABEL_0")
    scores = reward(prompts=["a", "b", "c"], completions=["good", "bad", "fine"])
    assert len(scores) == 3 and all(isinstance(s, float) for s in scores)
    with pytest.raises(
        RewardError, match=r"target_label 'POSITIVE' is not a label of the pipeline's model; allowed: LABEL_0"
    ):
        ClassifierReward(clf, target_label="POSITIVE")(prompts=["a"], completions=["x"])


def flaky_judge(fails_on_call: int = 2) -> Any:
    """A reward that raises on one call, like a judge service that times out once."""
    calls = {"n": 0}

    @reward_fn(name="flaky_judge")
    def judge(prompts: list[str], completions: list[str], **_: Any) -> list[float]:
        calls["n"] += 1
        if calls["n"] == fails_on_call:
            raise ConnectionError("judge unreachable")
        return [0.5] * len(completions)

    return judge


def test_reward_failing_mid_run_names_reward_and_prompt(tiny: Path, tmp_path: Path) -> None:
    model, tok, _ = load_model(str(tiny), load_ref=False)
    trainer = OnlineTrainer(model=model, tokenizer=tok, reward=flaky_judge(), train_dataset=from_list(["Say hi."] * 16),
                            config=fast("grpo", tmp_path, max_steps=3))  # fmt: skip
    with pytest.raises(RewardError, match=r"reward 'flaky_judge' raised ConnectionError: judge unreachable at training step 2 \(on a batch "
                                          r"of 4 completions whose first prompt is 'Say hi\.'\)"):  # fmt: skip
        trainer.train()


def test_online_trainer_needs_a_reward_and_a_matching_reference(tiny: Path, tiny_rm: Path, tmp_path: Path) -> None:
    model, tok, _ = load_model(str(tiny), load_ref=False)
    data = from_list(["Say hi."] * 8)
    with pytest.raises(ConfigError, match=r"reward: is required for online training"):
        OnlineTrainer(model=model, tokenizer=tok, reward=None, train_dataset=data, config=fast("grpo", tmp_path))
    other, _, _ = load_model(str(tiny_rm), load_ref=False)
    with pytest.raises(ConfigError, match=r"ref_model: comes from .* but the policy from .*; TRL's online trainers"):
        OnlineTrainer(model=model, ref_model=other, tokenizer=tok, reward=reward_fn(lambda prompts, completions: [1.0] * len(completions)),
                      train_dataset=data, config=fast("grpo", tmp_path))  # fmt: skip
    with pytest.raises(ConfigError, match=r"reward: got int 3; allowed: a reward function"):
        OnlineTrainer(model=model, tokenizer=tok, reward=[3], train_dataset=data, config=fast("grpo", tmp_path))


def test_tiny_model_is_deterministic(tmp_path: Path) -> None:
    from safetensors.torch import load_file

    from textrl.tiny import build_tiny_model

    a, b = build_tiny_model(tmp_path / "a", seed=3), build_tiny_model(tmp_path / "b", seed=3)
    c = build_tiny_model(tmp_path / "c", seed=4)
    wa, wb, wc = (load_file(p / "model.safetensors") for p in (a, b, c))
    assert all(wa[k].equal(wb[k]) for k in wa) and not all(wa[k].equal(wc[k]) for k in wa)
    assert (a / "tokenizer.json").read_text() == (b / "tokenizer.json").read_text()


def test_conversational_prompts_train(tiny: Path, tmp_path: Path) -> None:
    """A `messages` column of chat turns becomes the prompt; the tiny tokenizer's chat template renders it."""
    model, tok, _ = load_model(str(tiny), load_ref=False)
    chats = [{"messages": [{"role": "user", "content": f"Say {w}."}]} for w in ("hi", "yes", "no", "ok")] * 2
    trainer = OnlineTrainer(model=model, tokenizer=tok, train_dataset=from_list(chats), config=fast("grpo", tmp_path, max_steps=1),
                            reward=reward_fn(lambda prompts, completions: [float(len(c[0]["content"])) for c in completions]))  # fmt: skip
    trainer.train()
    assert "reward" in trainer.log_history[0]


def test_python_api_stops_cleanly_on_a_signal(tiny: Path, tmp_path: Path) -> None:
    """The first SIGTERM saves a checkpoint at the end of the step and raises TrainingInterrupted naming it;
    a second one stops at once with a plain KeyboardInterrupt, saving nothing more."""
    import os
    import signal

    from textrl.trainers.interrupt import TrainingInterrupted

    def sends(times: int, at_call: int) -> Any:
        calls = {"n": 0}

        def reward(prompts: list[str], completions: list[str], **_: Any) -> list[float]:
            calls["n"] += 1
            if calls["n"] == at_call:
                for _ in range(times):
                    os.kill(os.getpid(), signal.SIGTERM)
            return [0.5] * len(completions)

        return reward

    model, tok, _ = load_model(str(tiny), load_ref=False)
    trainer = OnlineTrainer(model=model, tokenizer=tok, reward=sends(1, 2), train_dataset=from_list(["Say hi."] * 16),
                            config=fast("grpo", tmp_path / "once", max_steps=10, save_strategy="steps", save_steps=100))  # fmt: skip
    with pytest.raises(
        TrainingInterrupted, match=r"stopped by SIGTERM at step 2; checkpoint saved to .*checkpoint-2"
    ) as info:
        trainer.train()
    assert info.value.step == 2 and (tmp_path / "once/checkpoint-2/trainer_state.json").is_file()
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL or callable(signal.getsignal(signal.SIGTERM))

    model, tok, _ = load_model(str(tiny), load_ref=False)
    trainer = OnlineTrainer(model=model, tokenizer=tok, reward=sends(2, 2), train_dataset=from_list(["Say hi."] * 16),
                            config=fast("grpo", tmp_path / "twice", max_steps=10, save_strategy="steps", save_steps=100))  # fmt: skip
    with pytest.raises(KeyboardInterrupt, match="second SIGTERM: stopping at once") as second:
        trainer.train()
    assert not isinstance(second.value, TrainingInterrupted)
    assert not list((tmp_path / "twice").glob("checkpoint-*"))


def test_reward_errors_skip_keeps_training_and_counts(tiny: Path, tmp_path: Path) -> None:
    model, tok, _ = load_model(str(tiny), load_ref=False)
    trainer = OnlineTrainer(model=model, tokenizer=tok, reward=flaky_judge(), train_dataset=from_list(["Say hi."] * 16),
                            config=fast("grpo", tmp_path, max_steps=3, reward_errors="skip"))  # fmt: skip
    trainer.train()
    assert trainer.skipped == {"flaky_judge": 1}
    shares = [h["rewards/flaky_judge/skipped"] for h in trainer.log_history if "rewards/flaky_judge/skipped" in h]
    assert shares == [0.0, 1.0, 0.0]
    assert trainer.trl_trainer.state.global_step == 3


def test_trl_script_reward_soft_overlong_punishment_is_trls() -> None:
    """`reward_funcs: [get_soft_overlong_punishment]` in a TRL recipe: TRL's reward with its script's values."""
    from trl.rewards import get_soft_overlong_punishment

    from textrl.rewards.checks import check_signature
    from textrl.rewards.from_trl import soft_overlong_punishment

    ids = [[1] * n for n in (900, 1024, 1100, 1280, 1300)]
    expected = get_soft_overlong_punishment(max_completion_len=1280, soft_punish_cache=256)(completion_ids=ids)
    assert soft_overlong_punishment(completion_ids=ids, prompts=["p"] * 5) == expected
    assert expected[0] == 0 and expected[-1] == -1 and -1 < expected[2] < 0
    check_signature(soft_overlong_punishment, ["prompt"])  # TRL fills completion_ids
