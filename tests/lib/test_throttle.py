"""The sign-in throttle's counts and the client address behind proxies."""

from __future__ import annotations

import threading

from pipelines.lib.throttle import SignInThrottle, client_address


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


def test_counts_per_account_and_per_address_within_the_window():
    clock = Clock()
    th = SignInThrottle(per_account=3, per_address=5, window=60, clock=clock)
    assert all(th.begin("ivy", "a1") for _ in range(3)) and th.begin("ivy", "a2") is None  # the account is full
    assert th.begin("rex", "a1") and th.begin("roy", "a1") and th.begin("amy", "a1") is None  # the address is full
    clock.t += 61
    assert th.begin("ivy", "a1") is not None  # the window slid


def test_success_gives_back_its_place_and_forgets_the_account():
    th = SignInThrottle(per_account=2, per_address=10, clock=Clock())
    th.begin("ivy", "a")
    ok = th.begin("ivy", "a")
    th.succeeded(ok)
    assert th.begin("ivy", "a") and th.begin("ivy", "a") and th.begin("ivy", "a") is None


def test_parallel_reservations_never_pass_the_limit():
    th = SignInThrottle(per_account=5, per_address=1000)
    got, barrier = [], threading.Barrier(50)

    def guess():
        barrier.wait()
        got.append(th.begin("ivy", "a"))

    threads = [threading.Thread(target=guess) for _ in range(50)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(a is not None for a in got) == 5


def test_client_address():
    assert client_address("127.0.0.1", "6.6.6.6") == "127.0.0.1"  # no proxy configured: the header is ignored
    assert client_address("127.0.0.1", "6.6.6.6", ["10.0.0.0/8"]) == "127.0.0.1"  # the peer is no proxy
    assert client_address("10.1.2.3", "6.6.6.6, 192.0.2.7", ["10.0.0.0/8"]) == "192.0.2.7"
    assert client_address("10.1.2.3", "192.0.2.7, 10.0.0.9", ["10.0.0.0/8"]) == "192.0.2.7"  # proxy chain
    assert client_address("10.1.2.3", "10.0.0.9", ["10.0.0.0/8"]) == "10.1.2.3"  # only proxies: the peer
    assert client_address("10.1.2.3", "", ["10.0.0.0/8"]) == "10.1.2.3"
    assert client_address(None, None) == ""
