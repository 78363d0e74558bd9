"""The sign-in throttle: failed sign-ins per account and per address within a sliding window.

An attempt takes its place in both counts *before* the password is
checked (:meth:`SignInThrottle.begin`), under a lock, and gives it back
only when the password was right (:meth:`SignInThrottle.succeeded`). So
100 guesses sent at once are 100 reservations against the same counts:
at most ``per_account`` of them reach the (slow, scrypt) check for one
account, at most ``per_address`` from one address, however the requests
interleave. A wrong password simply keeps its place.

The address is whatever the caller says it is: the web app passes the
TCP peer, or the client named by ``X-Forwarded-For`` only when the peer
is a configured proxy (:func:`client_address`).
"""

from __future__ import annotations

import ipaddress
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass

__all__ = ["Attempt", "SignInThrottle", "client_address"]

#: longer names cannot be users (the review store allows 64 characters); they share one count per prefix
_KEY_CHARS = 128


@dataclass(frozen=True)
class Attempt:
    """A reserved sign-in attempt: give it back with :meth:`SignInThrottle.succeeded` if the password was right."""
    account: str
    address: str
    at: float


class SignInThrottle:
    """At most ``per_account`` failed sign-ins per account and ``per_address`` per address in ``window`` seconds."""

    def __init__(self, per_account: int = 5, per_address: int = 20, window: float = 300.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.per_account, self.per_address, self.window = per_account, per_address, window
        self._clock = clock
        self._lock = threading.Lock()
        self._by_account: dict[str, deque[float]] = {}
        self._by_address: dict[str, deque[float]] = {}

    def begin(self, account: str, address: str) -> Attempt | None:
        """Reserve one attempt for ``account`` from ``address``; None when either count is full (refuse it)."""
        account = account[:_KEY_CHARS]
        now = self._clock()
        with self._lock:
            if len(self._by_account) + len(self._by_address) > 100_000:
                self._sweep(now)
            acc = self._recent(self._by_account, account, now)
            addr = self._recent(self._by_address, address, now)
            if len(acc) >= self.per_account or len(addr) >= self.per_address:
                return None
            acc.append(now)
            addr.append(now)
            return Attempt(account, address, now)

    def succeeded(self, attempt: Attempt) -> None:
        """The password was right: the attempt's reservations go, and the account's failures are forgotten."""
        with self._lock:
            self._by_account.pop(attempt.account, None)
            addr = self._by_address.get(attempt.address)
            if addr is not None:
                try:
                    addr.remove(attempt.at)
                except ValueError:
                    pass

    def _recent(self, table: dict[str, deque[float]], key: str, now: float) -> deque[float]:
        q = table.setdefault(key, deque())
        while q and now - q[0] >= self.window:
            q.popleft()
        return q

    def _sweep(self, now: float) -> None:
        """Drop every count whose failures have all left the window (bounds memory under a name-spraying attack)."""
        for table in (self._by_account, self._by_address):
            for key in [k for k, q in table.items() if not q or now - q[-1] >= self.window]:
                del table[key]


def client_address(peer: str | None, forwarded_for: str | None, trusted_proxies: Iterable[str] = ()) -> str:
    """The address a request comes from, for throttling.

    ``peer`` is the TCP peer. ``X-Forwarded-For`` (``forwarded_for``) is read
    only when the peer is one of ``trusted_proxies`` (addresses or networks,
    e.g. ``127.0.0.1`` or ``10.0.0.0/8``); then the right-most entry that is
    not itself a trusted proxy is the client (entries further left were
    written by the client and prove nothing).
    """
    peer = peer or ""
    nets = [ipaddress.ip_network(p, strict=False) for p in trusted_proxies]
    if not nets or not forwarded_for or not _in(peer, nets):
        return peer
    for hop in reversed([h.strip() for h in forwarded_for.split(",")]):
        if hop and not _in(hop, nets):
            return hop
    return peer


def _in(address: str, nets: list) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in n for n in nets)
