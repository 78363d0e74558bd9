"""``railbird serve``: the investigators' web app on localhost (uvicorn).

It reads the snapshot the nightly run publishes and the review store; it
never opens the live warehouse, so it can run while a run writes.

``X-Forwarded-For`` is ignored (uvicorn's proxy headers are off) unless the
app sits behind a proxy named with ``--trusted-proxy`` (or the
``RAILBIRD_TRUSTED_PROXIES`` environment variable, comma-separated): a
client could otherwise pick any address and escape the sign-in throttle.
"""

from __future__ import annotations

import argparse
import os

from pipelines.lib import paths


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8765, help="port (default 8765)")
    parser.add_argument("--snapshot", default=None, help="published snapshot (default: RAILBIRD_HOME/snapshot/warehouse.duckdb)")
    parser.add_argument("--review-db", default=None, help="review store (default: RAILBIRD_HOME/review.sqlite)")
    parser.add_argument("--sql-timeout", type=float, default=10.0, help="seconds before a SQL page query is stopped")
    parser.add_argument("--sql-rows", type=int, default=1000, help="row limit of the SQL page")
    parser.add_argument("--sql-workers", type=int, default=2, help="SQL page queries at once (default 2)")
    parser.add_argument("--secure-cookie", action="store_true", help="mark the session cookie Secure (behind HTTPS)")
    parser.add_argument("--trusted-proxy", action="append", default=None, metavar="ADDRESS",
                        help="a reverse proxy (address or network) whose X-Forwarded-For names the client; "
                             "repeatable (default: $RAILBIRD_TRUSTED_PROXIES, else none)")


def settings_of(args: argparse.Namespace):  # -> WebSettings
    """The web app's settings from the command line (and RAILBIRD_TRUSTED_PROXIES)."""
    import ipaddress

    from pipelines.lib.errors import RailbirdError
    from pipelines.web.app import WebSettings

    proxies = args.trusted_proxy
    if proxies is None:
        proxies = [p.strip() for p in os.environ.get("RAILBIRD_TRUSTED_PROXIES", "").split(",") if p.strip()]
    for p in proxies:
        try:
            ipaddress.ip_network(p, strict=False)
        except ValueError:
            raise RailbirdError(f"--trusted-proxy {p!r} is not an address or network") from None
    return WebSettings(
        snapshot_path=args.snapshot or str(paths.snapshot_path()),
        review_db=args.review_db or str(paths.review_store_path()),
        sql_timeout=args.sql_timeout, sql_row_limit=args.sql_rows, sql_workers=args.sql_workers,
        secure_cookie=args.secure_cookie, trusted_proxies=tuple(proxies))


def uvicorn_config(app, host: str, port: int):  # -> uvicorn.Config
    """uvicorn's configuration of the app: proxy headers off (the app reads X-Forwarded-For from trusted proxies only)."""
    import uvicorn

    return uvicorn.Config(app, host=host, port=port, log_level="warning", proxy_headers=False)


def main(args: argparse.Namespace) -> int:
    from pipelines.lib.review import ReviewStore
    from pipelines.web.app import create_app

    settings = settings_of(args)
    with ReviewStore(settings.review_db) as store:
        if not store.users():
            from pipelines.cli import command_name

            print(f"No users yet: add one with `{command_name()} users add NAME --role admin` "
                  "(it asks for the password; --password-stdin reads it from standard input).")
    print(f"railbird: http://{args.host}:{args.port}/cases  (snapshot {settings.snapshot_path})")
    uvicorn.Server(uvicorn_config(create_app(settings), args.host, args.port)).run()
    return 0
