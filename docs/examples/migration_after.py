"""The PFRL-era example of docs/migration.md, section 1, in TextRL 1.0 (the tests run this file)."""

from textrl import OnlineTrainer, TextRLConfig, load_model, reward_fn
from textrl.data import from_list


@reward_fn
def length_reward(prompts, completions, **_):  # once per batch, on finished completions
    return [-abs(len(c) - 64) / 64 for c in completions]


# "textrl:tiny" is TextRL's offline demo model; for a real run pass a hub id, e.g. "bigscience/bloomz-560m"
model, tok, _ = load_model("textrl:tiny")
cfg = TextRLConfig(
    algo="grpo",  # actor.agent_ppo(...)
    output_dir="bloom-test",  # outdir=
    max_completion_length=20,  # max_length=20
    num_generations=2,  # compare_sample=2
    temperature=1.0,
    top_k=0,
    top_p=1.0,
    generation_batch_size=2,  # update_interval=2, now counted in completions
    per_device_train_batch_size=2,  # minibatch_size=2
    num_iterations=10,  # epochs=10
    max_steps=2,  # steps=100 counted generated tokens; this counts optimizer steps
)
OnlineTrainer(
    model=model,
    tokenizer=tok,
    reward=length_reward,
    train_dataset=from_list([{"prompt": "explain how attention works"}]),  # observation_input=
    config=cfg,
).train()
