"""Write the arithmetic task's data: train prompts, held-out prompts, DPO preference pairs and SFT demonstrations.

    python examples/smollm2/make_data.py     # rewrites the .jsonl files beside this script (deterministic)

Questions are "What is a plus b? Answer with only the number." for a, b in 1..12; 32 of the 144 pairs are held
out and never trained on. The preference pairs put the bare correct sum as `chosen` against either a run-on
answer (the base model's habit) or a bare wrong number.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

HERE = Path(__file__).parent
QUESTION = "What is {a} plus {b}? Answer with only the number."
RUN_ON = [
    "{a} + {b} = {s}. This is a classic example of adding two numbers together.",
    "The answer is {s}. To find it, we combine {a} and {b} by adding them.",
    "To solve this problem, we need to add {a} and {b}, which gives us {s}.",
    "Sure! {a} plus {b} equals {s}, because adding {b} to {a} gives {s}.",
]


PHRASINGS = [QUESTION, "Add {a} and {b}. Reply with the number only.", "{a} + {b} = ? Give just the number."]


def prompt(a: int, b: int, question: str = QUESTION) -> list[dict[str, str]]:
    return [{"role": "user", "content": question.format(a=a, b=b)}]


def write(name: str, rows: list[dict[str, object]]) -> None:
    with (HERE / name).open("w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(row) + "\n" for row in rows)


def main() -> None:
    rng = random.Random(0)
    questions = [(a, b) for a in range(1, 13) for b in range(1, 13)]
    rng.shuffle(questions)
    held_out, train = questions[:32], questions[32:]
    write("train.jsonl", [{"prompt": prompt(a, b), "answer": str(a + b)} for a, b in train])
    write("heldout.jsonl", [{"prompt": prompt(a, b), "answer": str(a + b)} for a, b in held_out])
    pairs = []
    for i, (a, b) in enumerate(train):
        s = a + b
        if i % 3 == 2:  # a bare number, but the wrong one: the first operand, or off by a little
            rejected = str(rng.choice([a, b, s - 1, s + 1, s + 2]))
        else:
            rejected = rng.choice(RUN_ON).format(a=a, b=b, s=s)
        pairs.append(
            {
                "prompt": prompt(a, b),
                "chosen": [{"role": "assistant", "content": str(s)}],
                "rejected": [{"role": "assistant", "content": rejected}],
            }
        )
    write("pairs.jsonl", pairs)
    demos = [
        {"prompt": prompt(a, b, question), "completion": [{"role": "assistant", "content": str(a + b)}]}
        for question in PHRASINGS
        for a, b in train
    ]
    rng.shuffle(demos)
    write("sft.jsonl", demos)


if __name__ == "__main__":
    main()
