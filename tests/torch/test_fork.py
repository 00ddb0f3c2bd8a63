"""fork() while another thread is inside DTR (Note [Fork]): the child gets
a fresh context and never waits for a lock the parent's threads held."""
import os
import signal
import threading
import time
import unittest
import warnings

import torch

import dtr

FORKS = 20
CHILD_TIMEOUT_S = 15

# Child exit codes.
OK, WRONG, OLD_TENSOR_USABLE, CRASHED = 0, 3, 4, 5


def _wait(pid, timeout_s):
    """The child's exit status, or None (child killed) after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return None


def _child(old):
    """What a forked child does; returns its exit code."""
    # Plain tensors (the counting allocator's lock).
    a = torch.randn(64, 64)
    # New checkpointed tensors, under a budget that evicts.
    x = dtr.checkpoint(a)
    y = x
    with dtr.budget(64 * 64 * 4 * 3):
        for _ in range(8):
            y = torch.tanh(y @ x)
        got = dtr.decheckpoint(y.sum())
    want = a
    for _ in range(8):
        want = torch.tanh(want @ a)
    if not torch.equal(got, want.sum()):
        return WRONG
    # A checkpointed tensor from before the fork: a clear error.
    try:
        (old * 2).sum()
    except RuntimeError as e:
        if "made before fork()" not in str(e):
            return WRONG
    else:
        return OLD_TENSOR_USABLE
    return OK


class ForkTest(unittest.TestCase):
    def setUp(self):
        # Python warns that forking a process with threads may deadlock:
        # exactly what this test checks DTR does not do.
        warnings.simplefilter("ignore", DeprecationWarning)

    def test_fork_while_another_thread_is_inside_dtr(self):
        stop = threading.Event()
        errors = []

        def busy():
            # Under a budget that evicts, so the thread is inside DTR's lock
            # (evicting, rematerializing) most of the time.
            try:
                w = torch.randn(128, 128)
                with dtr.budget(128 * 128 * 4 * 4):
                    while not stop.is_set():
                        h = dtr.checkpoint(torch.ones(128, 128))
                        for _ in range(16):
                            h = torch.tanh(h @ w)
                        dtr.decheckpoint(h.sum())
            except Exception as e:  # noqa: BLE001 (reported below)
                errors.append(e)

        old = dtr.checkpoint(torch.ones(8))
        thread = threading.Thread(target=busy)
        thread.start()
        results = []
        try:
            time.sleep(0.2)  # the thread is in its loop
            for _ in range(FORKS):
                pid = os.fork()
                if pid == 0:
                    code = CRASHED
                    try:
                        code = _child(old)
                    finally:
                        os._exit(code)
                results.append(_wait(pid, CHILD_TIMEOUT_S))
                if results[-1] is None:
                    break  # one hang is the failure; no need for more
        finally:
            stop.set()
            thread.join()
        self.assertEqual(errors, [])
        self.assertNotIn(None, results,
                         "a child hung (killed after %d s)" % CHILD_TIMEOUT_S)
        self.assertEqual(results, [OK] * FORKS)
        # The parent's own DTR state is untouched.
        self.assertTrue(torch.equal(dtr.decheckpoint(old * 2),
                                    torch.full((8,), 2.0)))

    def test_child_keeps_the_budget_block_it_was_forked_in(self):
        with dtr.budget(123456):
            pid = os.fork()
            if pid == 0:
                code = CRASHED
                try:
                    code = (OK if dtr.stats()["budget_bytes"] == 123456
                            else WRONG)
                finally:
                    os._exit(code)
        self.assertEqual(_wait(pid, CHILD_TIMEOUT_S), OK)

    def test_child_ends_the_block_it_was_forked_in(self):
        pid = -1
        with dtr.budget(123456):
            pid = os.fork()
            if pid == 0:
                try:
                    with dtr.budget(1000):
                        pass
                except BaseException:  # noqa: BLE001 (the exit code says)
                    os._exit(CRASHED)
        if pid == 0:
            # Both blocks ended in the child, as they began.
            os._exit(OK if dtr.stats()["budget_bytes"] == dtr.UNLIMITED
                     else WRONG)
        self.assertEqual(_wait(pid, CHILD_TIMEOUT_S), OK)

if __name__ == "__main__":
    unittest.main()
