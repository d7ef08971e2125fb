"""TextRL < 1.0 (PFRL, token-level PPO): the "Before" of docs/migration.md, section 1.

This API no longer exists (`from textrl import TextRLEnv` raises ImportError), so the tests only compile
this file. docs/examples/migration_after.py is the same run in TextRL 1.0, and it runs.
"""

import pfrl
from transformers import AutoModelForCausalLM, AutoTokenizer

from textrl import TextRLActor, TextRLEnv

model = AutoModelForCausalLM.from_pretrained("bigscience/bloomz-560m")
tokenizer = AutoTokenizer.from_pretrained("bigscience/bloomz-560m")


class MyRLEnv(TextRLEnv):
    def get_reward(self, input_item, predicted_list, finish):
        return 1 if finish else 0  # called at every token


env = MyRLEnv(model, tokenizer, observation_input=[["explain how attention works"]], max_length=20, compare_sample=2)
actor = TextRLActor(env, model, tokenizer, temperature=1, compare_sample=2, top_k=0, top_p=1.0)
agent = actor.agent_ppo(update_interval=2, minibatch_size=2, epochs=10)
pfrl.experiments.train_agent_with_evaluation(
    agent, env, steps=100, eval_n_steps=None, eval_n_episodes=1, eval_interval=2, outdir="bloom-test"
)
