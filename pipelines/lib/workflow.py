"""The review workflow's role rules, in one place: what a user may do to a case.

The web app shows a user only the actions :func:`allowed_actions` returns,
and the review store (:mod:`pipelines.lib.review`) accepts a change only
when :func:`refusal` has no objection, so what is offered is what is
accepted.

Actions are strings: ``note``, ``assign``, ``propose`` (propose
confirmation), ``approve`` / ``reject`` (the pending proposal) and
``status:<status>`` for a move to another status (never ``confirmed``).

The rules:

- anyone signed in may add a note or assign;
- confirmation takes two people: one proposes, a reviewer (or admin) other
  than the proposer approves; only a reviewer or the proposer may withdraw
  a pending proposal, and any other action that would withdraw it (a status
  change, a second proposal) needs that same right;
- a confirmed case is undone by two people as well: a reviewer reopens it
  (``in_review``, the only move out of ``confirmed``), and only a
  different reviewer may then dismiss or close it.
"""

from __future__ import annotations

from typing import Any, Mapping

__all__ = ["ACTIONS", "CLOSED_STATUSES", "REVIEWER_ROLES", "ROLES", "STATUSES",
           "allowed_actions", "refusal"]

STATUSES = ("new", "in_review", "confirmed", "dismissed", "closed_insufficient_evidence")
CLOSED_STATUSES = ("dismissed", "closed_insufficient_evidence")
ROLES = ("investigator", "reviewer", "admin")
REVIEWER_ROLES = ("reviewer", "admin")
ACTIONS = ("note", "assign", "propose", "approve", "reject",
           *(f"status:{s}" for s in STATUSES if s != "confirmed"))


def refusal(role: str, case: Mapping[str, Any], user: str, action: str) -> str | None:
    """Why ``user`` (of ``role``) may not take ``action`` on ``case``, or None if they may.

    Parameters
    ----------
    role, user:
        The acting user's role (one of :data:`ROLES`) and name.
    case:
        The case as :meth:`ReviewStore.case` returns it: ``status``,
        ``confirm_proposed_by`` (the pending proposal's author or None) and
        ``unconfirmed_by`` (who reopened it, if it was confirmed and has not
        been closed or confirmed again since).
    action:
        One of :data:`ACTIONS`; ``status:<s>`` with ``s`` the current status
        is a note only and is refused only where a note would be.

    Returns
    -------
    A sentence for the user, or None.
    """
    if role not in ROLES:
        return f"unknown role {role!r}"
    status, proposer = case["status"], case.get("confirm_proposed_by")
    reviewer = role in REVIEWER_ROLES
    may_withdraw = reviewer or user == proposer
    if action in ("note", "assign"):
        return None
    if action == "propose":
        if status == "confirmed":
            return "the case is already confirmed"
        if proposer:
            return f"{proposer} has already proposed confirmation: approve or reject that proposal"
        return None
    if action in ("approve", "reject"):
        if not proposer:
            return "nobody has proposed confirmation"
        if action == "reject":
            return None if may_withdraw else "only a reviewer or the proposer can withdraw a confirmation proposal"
        if not reviewer:
            return "only a reviewer can approve a confirmation"
        if proposer == user:
            return "two-person rule: the approving reviewer must not be the proposer"
        return None
    if not action.startswith("status:"):
        return f"unknown action {action!r}"
    new = action[len("status:"):]
    if new not in STATUSES:
        return f"unknown status {new!r}"
    if new == "confirmed":
        return "a case is confirmed only by a second reviewer: propose confirmation instead"
    if new == status:
        return None
    if status == "confirmed":
        if not reviewer:
            return "only a reviewer can reopen a confirmed case"
        if new != "in_review":
            return "a confirmed case is first reopened (in review); a second reviewer may then close it"
    if proposer and not may_withdraw:
        return (f"changing the status would withdraw {proposer}'s confirmation proposal, "
                "which only a reviewer or the proposer can do")
    unconfirmed_by = case.get("unconfirmed_by")
    if new in CLOSED_STATUSES and unconfirmed_by and (not reviewer or user == unconfirmed_by):
        return (f"this case was confirmed and {unconfirmed_by} reopened it: "
                "a different reviewer must close it")
    return None


def allowed_actions(role: str, case: Mapping[str, Any], user: str) -> frozenset[str]:
    """The actions of :data:`ACTIONS` that ``user`` (of ``role``) may take on ``case`` now.

    Status moves to the current status are left out (they change nothing);
    ``status`` alone is in the set when any status move is, for a page that
    shows the status form once and its choices from the ``status:<s>``
    members. Same parameters as :func:`refusal`, whose rules this applies.
    """
    acts = {a for a in ACTIONS if a != f"status:{case['status']}" and refusal(role, case, user, a) is None}
    if any(a.startswith("status:") for a in acts):
        acts.add("status")
    return frozenset(acts)
