"""railbird's pipeline: the Dagster code location, the CLI and the web app."""
