"""Catching TextRL's config errors (docs/migration.md, section 4)."""

from textrl import ConfigError, MigrationError, TextRLConfig

for options in ({"algo": "simpo"}, {"algo": "dpo", "rpo_alpha": 0.5, "max_prompt_length": 512}):
    try:
        TextRLConfig(output_dir="out", **options)
    except MigrationError as e:  # a removed algorithm: the message names the replacement
        print(e)
    except ConfigError as e:  # every problem found, each naming its field
        for p in e.problems:
            print(p.field, "->", p.message)
