"""The config as validated data: the base class every generated config class derives from (`config`), validation
messages (`errors`), YAML reading (`yaml_io`), type annotations in words (`annotations`), and the one module the
generated code imports from the runtime (`generated_support`)."""
