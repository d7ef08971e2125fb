"""Generation engines for online training (GRPO, RLOO, REINFORCE++): settings for TRL's own integrations."""
