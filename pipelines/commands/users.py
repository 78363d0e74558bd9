"""``railbird users``: add investigators, reviewers and admins, change roles and passwords, list them.

Passwords come from a prompt (typed twice) or, for scripts, from the first
line of standard input with ``--password-stdin``; never from the command line.
"""

from __future__ import annotations

import argparse
import getpass
import sys

from pipelines.lib import paths
from pipelines.lib.errors import RailbirdError
from pipelines.lib.review import ROLES, ReviewStore


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--review-db", default=None, help="review store (default: RAILBIRD_HOME/review.sqlite)")
    common = argparse.ArgumentParser(add_help=False)  # so --review-db may also follow the action
    common.add_argument("--review-db", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = sub.add_parser("add", help="add a user", parents=[common])
    add.add_argument("name")
    add.add_argument("--role", choices=ROLES, default="investigator")
    add.add_argument("--password-stdin", action="store_true", help="read the password from standard input")
    pw = sub.add_parser("passwd", help="set a user's password (ends their sessions)", parents=[common])
    pw.add_argument("name")
    pw.add_argument("--password-stdin", action="store_true", help="read the password from standard input")
    role = sub.add_parser("role", help="change a user's role", parents=[common])
    role.add_argument("name")
    role.add_argument("role", choices=ROLES)
    sub.add_parser("list", help="list users and roles", parents=[common])


def _password(args: argparse.Namespace) -> str:
    if args.password_stdin:
        pw = sys.stdin.readline().rstrip("\r\n")
    else:
        pw = getpass.getpass("password: ")
        if getpass.getpass("again: ") != pw:
            raise RailbirdError("the two passwords differ")
    if not pw:
        raise RailbirdError("empty password")
    return pw


def main(args: argparse.Namespace) -> int:
    with ReviewStore(args.review_db or paths.review_store_path()) as store:
        if args.action == "add":
            store.add_user(args.name, args.role, _password(args))
            print(f"added {args.name} ({args.role})")
        elif args.action == "passwd":
            store.set_password(args.name, _password(args))
            print(f"password of {args.name} set")
        elif args.action == "role":
            store.set_role(args.name, args.role)
            print(f"{args.name} is now {args.role}")
        else:
            for u in store.users():
                print(f"{u['name']:<24} {u['role']:<13} since {u['created_at'][:10]}")
    return 0
