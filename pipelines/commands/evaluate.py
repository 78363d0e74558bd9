"""``railbird eval``: score a run's cases.jsonl against labels.jsonl (spec/evaluation.md).

Prints, per kind, recall, precision, average precision and false flags per
10,000 accounts seen. Accounts seen are the distinct players of the hand
histories: counted from ``--hands-dir``, read from a warehouse (``--warehouse``,
default the published snapshot), or given with ``--accounts``.
"""

from __future__ import annotations

import argparse
import json

from pipelines.lib import evaluation, paths
from pipelines.lib.errors import RailbirdError


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cases", required=True, help="the run's cases.jsonl")
    parser.add_argument("--labels", required=True, help="labels.jsonl (ground truth)")
    src = parser.add_mutually_exclusive_group()
    src.add_argument("--hands-dir", help="count accounts seen in these hand histories (*.txt)")
    src.add_argument("--warehouse", help="count accounts seen in this warehouse (default: the published snapshot)")
    src.add_argument("--accounts", type=int, help="accounts seen, given")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")


def main(args: argparse.Namespace) -> int:
    cases = evaluation.read_jsonl(args.cases, "cases")
    labels = evaluation.read_jsonl(args.labels, "labels")
    if args.accounts is not None:
        if args.accounts <= 0:
            raise RailbirdError("--accounts must be positive")
        n = args.accounts
    elif args.hands_dir:
        n = evaluation.accounts_in_hand_files(args.hands_dir)
    else:
        n = evaluation.accounts_in_warehouse(args.warehouse or paths.snapshot_path())
    ev = evaluation.evaluate(cases, labels, n)
    if args.json:
        print(json.dumps(ev.to_dict(), indent=2))
    else:
        print(evaluation.format_table(ev))
    return 0
