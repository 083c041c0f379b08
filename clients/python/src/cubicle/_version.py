"""The SDK's version: pyproject.toml reads it (hatch), the User-Agent sends it."""

__version__ = "0.2.0"

USER_AGENT = f"cubicle-python/{__version__}"
