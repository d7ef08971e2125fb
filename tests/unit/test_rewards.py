"""The reward contract, enforced with the reward's name: wrong length, non-numeric, NaN/inf, exceptions (with the
batch's first prompt); compose() weights, async concurrency, and the built-ins. No torch needed."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest

from textrl import RewardError, reward_fn
from textrl.rewards import BaseReward, Composed, RewardFn, as_reward, compose, length_penalty

PROMPTS = ["Write a poem.", "Explain RL."]
COMPLETIONS = ["roses are red", "reward goes up"]


def call(fn: Any, **kwargs: Any) -> Any:
    return fn(prompts=PROMPTS, completions=COMPLETIONS, **kwargs)


@pytest.mark.parametrize(
    ("output", "match"),
    [
        ([1.0], r"reward 'bad' returned 1 values for 2 completions; it must return one per completion"),
        ("0.5", r"reward 'bad' returned str; it must return a list with one float per completion \(2 here\)"),
        (
            [1.0, "high"],
            r"reward 'bad' returned 'high' \(str\) at position 1; allowed: a number or None\. Prompt: 'Explain RL\.'",
        ),
        ([1.0, True], r"returned True \(bool\) at position 1"),
        (
            [math.nan, 1.0],
            r"reward 'bad' returned nan at position 0; rewards must be finite\. Prompt: 'Write a poem\.'",
        ),
        ([1.0, math.inf], r"returned inf at position 1"),
    ],
)
def test_contract_violations_name_the_reward(output: Any, match: str) -> None:
    @reward_fn
    def bad(prompts: list[str], completions: list[str], **_: Any) -> Any:
        return output

    with pytest.raises(RewardError, match=match) as info:
        call(bad)
    assert info.value.reward == "bad"


def test_good_twin_and_none_skips() -> None:
    @reward_fn
    def good(prompts: list[str], completions: list[str], **_: Any) -> list[float | None]:
        return [1, None]

    assert call(good) == [1.0, None]
    assert isinstance(good, RewardFn)


def test_exception_inside_names_reward_and_first_prompt() -> None:
    @reward_fn(name="judge")
    def flaky(prompts: list[str], completions: list[str]) -> list[float]:
        raise TimeoutError("judge did not answer")

    with pytest.raises(
        RewardError,
        match=r"reward 'judge' raised TimeoutError: judge did not answer \(on a batch of 2 "
        r"completions whose first prompt is 'Write a poem\.'\)\. Fix:",
    ) as info:
        call(flaky, trainer_state=None)
    assert isinstance(info.value.__cause__, TimeoutError)


def test_functions_get_only_the_keywords_they_declare() -> None:
    seen = {}

    @reward_fn
    def strict(prompts: list[str], completions: list[str], answer: list[str]) -> list[float]:
        seen["answer"] = answer
        return [1.0, 0.0]

    assert call(strict, answer=["a", "b"], trainer_state=object(), completion_ids=[[1], [2]]) == [1.0, 0.0]
    assert seen["answer"] == ["a", "b"]


def test_base_reward_keeps_state() -> None:
    class Counter(BaseReward):
        name = "counter"

        def __init__(self) -> None:
            super().__init__()
            self.calls = 0

        def score(self, prompts: list[str], completions: list[str], **_: Any) -> list[float]:
            self.calls += 1
            return [float(self.calls)] * len(completions)

    counter = Counter()
    assert call(counter) == [1.0, 1.0] and call(counter) == [2.0, 2.0]
    assert counter.__name__ == "counter" and as_reward(counter) is counter

    class Broken(BaseReward):
        def score(self, prompts: list[str], completions: list[str], **_: Any) -> list[float]:
            return [1.0]

    with pytest.raises(RewardError, match=r"reward 'Broken' returned 1 values for 2 completions"):
        call(Broken())


def test_compose_weights_and_components() -> None:
    def a(prompts: list[str], completions: list[str], **_: Any) -> list[float]:
        return [1.0, 2.0]

    def b(prompts: list[str], completions: list[str], **_: Any) -> list[float | None]:
        return [10.0, None]

    both = compose(a, b, weights=[1.0, 0.5])
    assert isinstance(both, Composed) and [c.__name__ for c in both.components] == ["a", "b"]
    assert call(both) == [6.0, 2.0]
    assert compose(a, b).weights == [1.0, 1.0]
    with pytest.raises(RewardError, match=r"compose\(\) got 1 weights for 2 rewards"):
        compose(a, b, weights=[1.0])
    with pytest.raises(RewardError, match=r"compose\(\) needs at least one reward"):
        compose()


def test_async_rewards_run_concurrently() -> None:
    """Each reward waits until the other has started; run one after the other, they would time out."""
    events: dict[str, asyncio.Event] = {}

    def make(mine: str, other: str) -> Any:
        async def reward(prompts: list[str], completions: list[str], **_: Any) -> list[float]:
            events.setdefault(mine, asyncio.Event()).set()
            await asyncio.wait_for(events.setdefault(other, asyncio.Event()).wait(), timeout=5)
            return [1.0] * len(completions)

        reward.__name__ = mine
        return reward

    both = compose(make("a", "b"), make("b", "a"))
    assert asyncio.iscoroutinefunction(both.components[0])
    assert call(both) == [2.0, 2.0]


def test_sync_rewards_run_concurrently_and_errors_propagate() -> None:
    """Three plain functions meet at a 3-party barrier: only passes if compose() runs them at the same time."""
    import threading

    barrier = threading.Barrier(3, timeout=5)

    def make(name: str, value: float) -> Any:
        def reward(prompts: list[str], completions: list[str], **_: Any) -> list[float]:
            barrier.wait()
            return [value] * len(completions)

        reward.__name__ = name
        return reward

    assert call(compose(make("a", 1.0), make("b", 2.0), make("c", 3.0), weights=[1.0, 1.0, 0.5])) == [4.5, 4.5]

    def broken(prompts: list[str], completions: list[str], **_: Any) -> list[float]:
        raise ValueError("judge down")

    with pytest.raises(RewardError, match="reward 'broken' raised ValueError: judge down"):
        call(compose(make_plain(1.0), broken))


def test_compose_not_concurrent_stays_on_the_calling_thread() -> None:
    import threading

    where: list[str] = []

    def record(prompts: list[str], completions: list[str], **_: Any) -> list[float]:
        where.append(threading.current_thread().name)
        return [1.0] * len(completions)

    again = reward_fn(record, name="record_again")
    assert call(compose(record, make_plain(2.0), again, concurrent=False)) == [4.0, 4.0]
    assert where == [threading.current_thread().name] * 2


def make_plain(value: float) -> Any:
    def plain(prompts: list[str], completions: list[str], **_: Any) -> list[float]:
        return [value] * len(completions)

    return plain


def test_async_reward_contract_is_checked() -> None:
    @reward_fn
    async def short(prompts: list[str], completions: list[str], **_: Any) -> list[float]:
        return [1.0]

    with pytest.raises(RewardError, match=r"reward 'short' returned 1 values for 2 completions"):
        asyncio.run(short(prompts=PROMPTS, completions=COMPLETIONS))


def test_length_penalty() -> None:
    reward = length_penalty(14)
    assert call(reward) == pytest.approx([-1 / 14, 0.0])  # 13 and 14 characters
    assert length_penalty(2, unit="words")(prompts=["p"], completions=["one two three four"]) == [-1.0]
    with pytest.raises(ValueError, match=r"length_penalty unit: got 'tokens'; allowed: 'chars', 'words'"):
        length_penalty(10, unit="tokens")
    with pytest.raises(ValueError, match=r"length_penalty target: got 0"):
        length_penalty(0)


def test_compose_refuses_what_cannot_be_a_reward() -> None:
    """Caught when compose() is called, not at training step 1."""

    class Judge(BaseReward):
        def score(self, prompts: list[Any], completions: list[Any], **_: Any) -> list[float | None]:
            return [1.0] * len(completions)

    cases = [
        ((None,), {}, r"compose\(\): reward 0: got None; allowed: a reward function"),
        (("abc",), {}, r"compose\(\): reward 0: got the text 'abc', which is neither a reward model's folder nor a hub id"),
        ((Judge,), {}, r"compose\(\): reward 0: got the class Judge, not a reward.*Fix: pass an instance, Judge\(\)"),
        ((3,), {}, r"compose\(\): reward 0: got int 3; allowed: a reward function"),
        ((make_plain(1.0), make_plain(2.0)), {}, r"compose\(\): rewards 0 and 1 are both named 'plain'; TRL logs each"),
        ((make_plain(1.0), Judge()), {"weights": [math.nan, 1.0]}, r"compose\(\): weights\[0\] is nan; allowed: a finite number"),
        ((make_plain(1.0), Judge()), {"weights": [1.0, -math.inf]}, r"compose\(\): weights\[1\] is -inf"),
        ((make_plain(1.0), Judge()), {"weights": [1.0, "2"]}, r"compose\(\): weights\[1\] is '2'"),
    ]  # fmt: skip
    for rewards, kwargs, match in cases:
        with pytest.raises(RewardError, match=match):
            compose(*rewards, **kwargs)
    assert (
        call(compose(make_plain(1.0), Judge(), reward_fn(make_plain(2.0), name="two"), weights=[1, 2, 3])) == [9.0] * 2
    )
    assert compose("org/judge-model").components == ["org/judge-model"]  # a hub id: TRL loads it as a reward model


def test_signatures_trl_cannot_fill_are_refused() -> None:
    from textrl.rewards.checks import check_signature

    def positional(prompts, completions, /):  # type: ignore[no-untyped-def]
        return [1.0] * len(completions)

    def unfillable(texts: list[str], **_: Any) -> list[float]:
        return [1.0] * len(texts)

    def no_completions(prompts: list[str], answer: list[str]) -> list[float]:
        return [1.0] * len(prompts)

    with pytest.raises(RewardError, match=r"reward 'positional': parameter 'prompts' is positional-only"):
        compose(positional)
    with pytest.raises(RewardError, match=r"reward 'no_completions' takes neither completions nor completion_ids"):
        compose(no_completions)
    check_signature(unfillable, None)  # columns unknown yet: 'texts' could be one
    with pytest.raises(
        RewardError,
        match=r"reward 'unfillable': required parameter 'texts' is filled by nothing: TRL passes prompts, completions,"
        r" .* and the dataset's columns \(here: answer\) by keyword\. Fix: rename it",
    ):
        check_signature(unfillable, ["prompt", "answer"])
    check_signature(unfillable, ["prompt", "texts"])  # a column of that name fills it


def test_a_reward_gets_only_what_it_declares_even_without_prompts() -> None:
    def only_completions(completions: list[str]) -> list[float]:
        return [float(len(c)) for c in completions]

    assert call(reward_fn(only_completions)) == [13.0, 14.0]


def test_each_reward_gets_its_own_copy_of_its_inputs() -> None:
    """A reward that edits completions (or chat messages) in place must not change what the next one sees."""

    def vandal(prompts: list[Any], completions: list[Any], **_: Any) -> list[float]:
        completions[0] = "XXXXXXXXXXXXXXXXXXXXXXXX"
        completions[1][0]["content"] = ""
        prompts.clear()
        return [0.0, 0.0]

    seen: list[Any] = []

    def witness(prompts: list[Any], completions: list[Any], **_: Any) -> list[float]:
        seen.append((list(prompts), [c[0]["content"] if isinstance(c, list) else c for c in completions]))
        return [0.0, 0.0]

    completions: list[Any] = ["roses are red", [{"role": "assistant", "content": "hi"}]]
    for concurrent in (False, True):
        compose(vandal, witness, concurrent=concurrent)(prompts=list(PROMPTS), completions=completions)
    assert seen == [(PROMPTS, ["roses are red", "hi"])] * 2
    assert completions == ["roses are red", [{"role": "assistant", "content": "hi"}]]


@pytest.mark.parametrize(
    ("value", "match"),
    [
        (
            10**400,
            r"reward 'huge' returned 100000000000\.\.\. \(an integer of 401 digits\) at position 0, which does not "
            r"fit a float \(the largest is about 1\.8e308\)\. Prompt: 'Write a poem\.'\. Fix: scale or clip it",
        ),
        (-(10**5000), r"returned an integer of about 5001 digits at position 0, which does not fit a float"),
        (10**39, r"returned 1e\+39 at position 0, beyond float32 \(\+-3\.4e\+38\), which TRL stores rewards in"),
    ],
    ids=["10**400", "-10**5000", "10**39"],  # str() of the second is itself a ValueError
)
def test_a_number_beyond_float_range_is_a_named_reward_error(value: int, match: str) -> None:
    """10**400 used to be reported as `inf`, which the reward never returned; 10**39 fits a float but becomes inf
    in TRL's float32 reward tensor."""

    @reward_fn
    def huge(prompts: list[str], completions: list[str], **_: Any) -> list[int]:
        return [value, 1]

    with pytest.raises(RewardError, match=match):
        call(huge)

    @reward_fn
    def large(prompts: list[str], completions: list[str], **_: Any) -> list[int]:
        return [10**38, 1]

    assert call(large) == [1e38, 1.0]


def test_an_async_reward_called_synchronously_returns_its_scores() -> None:
    """The dry run and textrl-eval call rewards synchronously; an async one used to give them a coroutine
    ("'coroutine' object is not iterable"). as_reward runs it; training keeps the async form (checked) for TRL."""
    from textrl.rewards import checked, is_async

    async def judge(prompts: list[str], completions: list[str], **_: Any) -> list[float]:
        await asyncio.sleep(0)
        return [float(len(c)) for c in completions]

    scores = as_reward(judge)
    assert not is_async(scores) and scores.__name__ == "judge"
    assert call(scores) == [13.0, 14.0]
    assert call(as_reward(reward_fn(judge))) == [13.0, 14.0]  # already checked, still async: run as well
    assert as_reward(scores) is scores
    trl_form = checked(scores)  # handed to a trainer after as_reward: TRL gets the async form back, to gather it
    assert is_async(trl_form) and asyncio.run(call(trl_form)) == [13.0, 14.0]
    assert is_async(checked(judge))

    async def inside_a_running_loop() -> list[float | None]:  # a notebook, or an async caller
        result: list[float | None] = call(scores)
        return result

    assert asyncio.run(inside_a_running_loop()) == [13.0, 14.0]
    assert asyncio.run(_composed_in_a_loop(judge)) == [27.0, 28.0]

    async def short(prompts: list[str], completions: list[str], **_: Any) -> list[float]:
        return [1.0]

    with pytest.raises(RewardError, match=r"reward 'short' returned 1 values for 2 completions"):
        call(as_reward(short))


async def _composed_in_a_loop(judge: Any) -> Any:
    return call(compose(judge, make_plain(14.0)))


def test_length_penalty_is_a_reward_as_it_is() -> None:
    """The README spec's own example: compose(semantic_match, length_penalty, weights=[1.0, 0.1])."""

    @reward_fn
    def semantic_match(prompts: list[str], completions: list[str], **_: Any) -> list[float]:
        return [1.0 for _ in completions]

    reward = compose(semantic_match, length_penalty, weights=[1.0, 0.1])
    assert reward(prompts=["p", "q"], completions=["x" * 64, "x" * 32]) == [1.0, pytest.approx(0.95)]
    assert length_penalty(prompts=["p"], completions=["x" * 32]) == [-0.5]
    assert length_penalty(32, name="short").__name__ == "short"
