"""The investigators' web app: ``railbird serve`` (see ``pipelines.web.app``)."""
