"""The option catalogue, split by topic. Each description is written here once."""
