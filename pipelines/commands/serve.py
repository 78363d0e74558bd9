"""``railbird serve``: the investigators' web app on localhost (uvicorn).

It reads the snapshot the nightly run publishes and the review store; it
never opens the live warehouse, so it can run while a run writes.
"""

from __future__ import annotations

import argparse

from pipelines.lib import paths


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8765, help="port (default 8765)")
    parser.add_argument("--snapshot", default=None, help="published snapshot (default: RAILBIRD_HOME/snapshot/warehouse.duckdb)")
    parser.add_argument("--review-db", default=None, help="review store (default: RAILBIRD_HOME/review.sqlite)")
    parser.add_argument("--sql-timeout", type=float, default=10.0, help="seconds before a SQL page query is stopped")
    parser.add_argument("--sql-rows", type=int, default=1000, help="row limit of the SQL page")
    parser.add_argument("--secure-cookie", action="store_true", help="mark the session cookie Secure (behind HTTPS)")


def main(args: argparse.Namespace) -> int:
    import uvicorn

    from pipelines.lib.review import ReviewStore
    from pipelines.web.app import WebSettings, create_app

    settings = WebSettings(
        snapshot_path=args.snapshot or str(paths.snapshot_path()),
        review_db=args.review_db or str(paths.review_store_path()),
        sql_timeout=args.sql_timeout, sql_row_limit=args.sql_rows, secure_cookie=args.secure_cookie)
    with ReviewStore(settings.review_db) as store:
        if not store.users():
            print("No users yet: add one with `railbird users add NAME --role admin`.")
    print(f"railbird: http://{args.host}:{args.port}/cases  (snapshot {settings.snapshot_path})")
    uvicorn.run(create_app(settings), host=args.host, port=args.port, log_level="warning")
    return 0
