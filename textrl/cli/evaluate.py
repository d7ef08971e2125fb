"""`textrl-eval`: generate completions for a dataset's prompts in batches, score them, print statistics per reward."""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from ..errors import ConfigError, DataError, Problem, RewardError


def _whole(low: int, hint: str = "") -> Any:
    """An argparse type: an integer >= low, refused at parse time with what is allowed and the fix."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"got {text!r}; allowed: an integer >= {low}{hint}") from None
        if value < low:
            raise argparse.ArgumentTypeError(
                f"got {value}; allowed: an integer >= {low}{hint}. Fix: use a value >= {low}"
            )
        return value

    return parse


def _temperature(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"got {text!r}; allowed: a number >= 0 (0 means greedy)") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(
            f"got {text}; allowed: a finite number >= 0 (0 means greedy). Fix: e.g. --temperature 0.7"
        )
    return value


def eval_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="textrl-eval", description="Generate and score completions; no training.")
    parser.add_argument(
        "--model", required=True, help="A checkpoint folder, a hub id, a .gguf file, textrl:tiny or textrl:smollm2."
    )
    parser.add_argument("--gguf-file", default=None, help="A GGUF file inside the --model folder.")
    parser.add_argument("--dataset", required=True, help="A local .jsonl/.json/.csv/.parquet file or a hub dataset id.")
    parser.add_argument("--split", default="train", help="Split, with slicing such as test[:100] (default: train).")
    parser.add_argument("--subset", default=None, help="Hub dataset configuration name.")
    parser.add_argument(
        "--reward",
        action="append",
        required=True,
        metavar="MODULE:FUNCTION",
        help="A reward function; repeat for several (each is reported separately).",
    )
    parser.add_argument("--batch-size", type=_whole(1), default=8, help="Prompts generated together (default 8).")
    parser.add_argument("--max-new-tokens", type=_whole(1), default=64, help="Tokens per completion (default 64).")
    parser.add_argument("--num-generations", type=_whole(1), default=1, help="Completions per prompt (default 1).")
    parser.add_argument("--temperature", type=_temperature, default=1.0, help="Sampling temperature; 0 means greedy.")
    parser.add_argument("--seed", type=_whole(0), default=0, help="Random seed for sampling (default 0).")
    parser.add_argument(
        "--limit",
        type=_whole(1, " (leave --limit out to use every row)"),
        default=None,
        help="Use only the first N prompts (default: every row).",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=None,
        metavar="FILE.jsonl",
        help="Write every prompt, completion and reward here.",
    )
    return parser


def _load_prompts(args: argparse.Namespace) -> Any:
    from ..data import check_dataset, from_hub, from_jsonl

    path = Path(args.dataset)
    if path.suffix == ".jsonl" and path.is_file() and args.split == "train":
        data = from_jsonl(path)
    else:
        data = from_hub(args.dataset, split=args.split, subset=args.subset)
    data = check_dataset(data, "prompt-only")
    return data.select(range(min(args.limit, len(data)))) if args.limit is not None else data


def generate(model: Any, tokenizer: Any, prompts: list[Any], args: argparse.Namespace) -> list[str]:
    """Completions for `prompts` (num_generations each, in order), batch by batch with a progress bar."""
    import torch
    from tqdm import tqdm

    tokenizer.padding_side = "left"
    texts = [
        p if isinstance(p, str) else tokenizer.apply_chat_template(p, tokenize=False, add_generation_prompt=True)
        for p in prompts
    ]
    sampling = {"do_sample": True, "temperature": args.temperature} if args.temperature > 0 else {"do_sample": False}
    out: list[str] = []
    model.eval()
    for start in tqdm(range(0, len(texts), args.batch_size), desc="generating", unit="batch"):
        batch = tokenizer(
            texts[start : start + args.batch_size], return_tensors="pt", padding=True, add_special_tokens=False
        ).to(model.device)
        with torch.no_grad():
            ids = model.generate(
                **batch,
                max_new_tokens=args.max_new_tokens,
                num_return_sequences=args.num_generations,
                pad_token_id=tokenizer.pad_token_id,
                **sampling,
            )
        out += tokenizer.batch_decode(ids[:, batch["input_ids"].shape[1] :], skip_special_tokens=True)
    return out


def _device() -> str:
    import torch

    if torch.cuda.is_available():
        return "cuda"
    return "mps" if torch.backends.mps.is_available() else "cpu"


def as_completion(text: str, prompt: Any) -> Any:
    """A completion in TRL's shape: text for text prompts, `[{"role": "assistant", ...}]` for chat prompts."""
    return text if isinstance(prompt, str) else [{"role": "assistant", "content": text}]


def summarize(scores: dict[str, list[float | None]]) -> str:
    """One line per reward: count, mean, std, min, 10th/50th/90th percentiles and max (None values skipped)."""
    w = max(len("reward"), *(len(name) for name in scores))
    lines = [f"{'reward':<{w}} {'n':>5} {'mean':>9} {'std':>9} {'min':>9} {'p10':>9} {'p50':>9} {'p90':>9} {'max':>9}"]
    for name, values in scores.items():
        kept = sorted(v for v in values if v is not None)
        if not kept:
            lines.append(f"{name:<{w}} {0:>5}  (every completion skipped)")
            continue
        deciles = statistics.quantiles(kept, n=10, method="inclusive") if len(kept) > 1 else [kept[0]] * 9
        std = statistics.pstdev(kept)
        lines.append(
            f"{name:<{w}} {len(kept):>5} {statistics.fmean(kept):>9.4f} {std:>9.4f} {kept[0]:>9.4f} "
            f"{deciles[0]:>9.4f} {deciles[4]:>9.4f} {deciles[8]:>9.4f} {kept[-1]:>9.4f}"
        )
    return "\n".join(lines)


def check_output(args: argparse.Namespace) -> None:
    """`--output` is a file this command may write: not a folder, and not a file the command reads."""
    from ..overwrite import inputs, model_inputs, module_file

    output: Path = args.output
    if output.is_dir():
        raise ConfigError(
            [Problem("--output", f"{output} is a folder. Fix: give a file name, e.g. {output / 'scores.jsonl'}.")]
        )
    if not output.exists():
        return
    pairs: list[tuple[str, Path | str | None]] = [(f"--dataset {args.dataset}", args.dataset)]
    pairs += model_inputs(f"--model {args.model}", args.model, Path.cwd())
    pairs += [(f"the module of --reward {ref}", module_file(ref, Path.cwd())) for ref in args.reward]
    target = output.resolve()
    for item in inputs(pairs):
        if item.path == target or item.path in target.parents:
            raise ConfigError(
                [
                    Problem(
                        "--output",
                        f"{output} is {item.what} ({item.path}), which this command reads; writing the scores "
                        "there would destroy it. Fix: write them to a new file, e.g. --output scores.jsonl.",
                    )
                ]
            )


def eval_main(argv: list[str] | None = None) -> int:
    args = eval_parser().parse_args(argv)
    if args.temperature <= 0 and args.num_generations > 1:
        print(
            f"textrl-eval: --temperature {args.temperature} (greedy) gives the same completion every time, so "
            f"--num-generations {args.num_generations} would repeat it. Fix: sample (--temperature > 0) or use "
            "--num-generations 1.",
            file=sys.stderr,
        )
        return 2
    try:
        if args.output is not None:
            check_output(args)
        from transformers import set_seed

        from ..models import load_model
        from ..reward_checks import check_signature
        from ..reward_refs import resolve_ref
        from ..rewards import as_reward

        rewards = {ref: as_reward(resolve_ref(ref, Path.cwd(), "--reward")) for ref in args.reward}
        data = _load_prompts(args)
        for fn in rewards.values():  # a parameter nothing fills is named before the model loads
            check_signature(fn, data.column_names)
        set_seed(args.seed)
        model, tokenizer, _ = load_model(args.model, load_ref=False, task="causal-lm", gguf_file=args.gguf_file)
        model.to(_device())
        prompts = list(data["prompt"])
        started = time.perf_counter()
        texts = generate(model, tokenizer, prompts, args)
        seconds = time.perf_counter() - started
        # rewards see completions as TRL passes them: assistant messages when the prompts are conversational
        completions = [as_completion(t, prompts[0]) for t in texts]
        repeated = [p for p in prompts for _ in range(args.num_generations)]
        columns = {
            c: [v for v in data[c] for _ in range(args.num_generations)] for c in data.column_names if c != "prompt"
        }
        scores = {ref: fn(prompts=repeated, completions=completions, **columns) for ref, fn in rewards.items()}
    except (ConfigError, DataError, RewardError) as exc:
        print(f"textrl-eval: {exc}", file=sys.stderr)
        return 2
    print(
        f"{len(texts)} completions ({len(prompts)} prompts x {args.num_generations}) generated in {seconds:.3f} s: "
        f"{len(texts) / seconds:.1f} completions/s at batch size {args.batch_size}"
    )
    print(summarize(scores))
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        with args.output.open("w", encoding="utf-8") as handle:
            for i, (prompt, completion) in enumerate(zip(repeated, completions, strict=True)):
                row = {"prompt": prompt, "completion": completion, "rewards": {r: s[i] for r, s in scores.items()}}
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        print(f"wrote {len(completions)} rows to {args.output}")
    return 0
