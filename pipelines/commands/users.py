"""``railbird users``: add investigators, reviewers and admins, change roles and passwords, list them.

Passwords come from a prompt (typed twice) or from the first line of
standard input with ``--password-stdin`` (scripts, ``make``, anything without
a terminal: ``printf '%s\n' "$PW" | railbird users add NAME --password-stdin``);
never from the command line. Without a terminal and without the flag, the
command says so instead of waiting for a prompt nobody sees.
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
    add = sub.add_parser("add", help="add a user (password prompted, or --password-stdin)", parents=[common],
                         description="Add a user. The password is asked twice on the terminal; without one "
                                     "(scripts), pipe it in with --password-stdin.")
    add.add_argument("name")
    add.add_argument("--role", choices=ROLES, default="investigator")
    add.add_argument("--password-stdin", action="store_true",
                     help="read the password from the first line of standard input (no terminal needed)")
    pw = sub.add_parser("passwd", help="set a user's password (ends their sessions)", parents=[common])
    pw.add_argument("name")
    pw.add_argument("--password-stdin", action="store_true",
                    help="read the password from the first line of standard input (no terminal needed)")
    role = sub.add_parser("role", help="change a user's role", parents=[common])
    role.add_argument("name")
    role.add_argument("role", choices=ROLES)
    sub.add_parser("list", help="list users and roles", parents=[common])


def _password(args: argparse.Namespace) -> str:
    if args.password_stdin:
        pw = sys.stdin.readline().rstrip("\r\n")
    elif not sys.stdin.isatty():
        from pipelines.cli import command_name

        raise RailbirdError("no terminal to ask the password on: pipe it in with --password-stdin, e.g. "
                            f"printf '%s\\n' \"$PW\" | {command_name()} users {args.action} {args.name} --password-stdin")
    else:
        print("(to pipe the password in instead, use --password-stdin)", file=sys.stderr)
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
