"""`dtr train --nproc 2` stopped the way a job scheduler stops it: the
ranks never outlive the launcher (Note [Ranks die with their launcher])."""
import os
import shutil
import signal
import subprocess
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
DTR = os.environ.get("DTR_CLI") or os.path.join(ROOT, "build", "dtr", "cli",
                                                "dtr")
GONE_WITHIN_S = 5


def _children(pid):
    """The pids whose parent is `pid`."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                stat = f.read()
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may hold spaces, so split after it.
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            out.append(int(entry))
    return out


def _alive(pid):
    """Running, not a zombie waiting for its new parent to reap it."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _args(pid):
    """The command line of `pid`, [] if it is gone."""
    try:
        with open("/proc/%d/cmdline" % pid) as f:
            return f.read().split("\0")
    except OSError:
        return []


def _store_dir(pid):
    """The temporary folder a rank was told to use (--store DIR/store)."""
    args = _args(pid)
    return os.path.dirname(args[args.index("--store") + 1])


@unittest.skipUnless(os.access(DTR, os.X_OK), "needs the dtr CLI (DTR_CLI)")
class TrainLauncherTest(unittest.TestCase):
    def _start(self):
        """A launcher whose 2 ranks have started; (launcher, ranks, dir)."""
        launcher = subprocess.Popen(
            [DTR, "train", "--model", "mlp", "--batch", "64", "--steps",
             "100000", "--nproc", "2", "--bytes-cost", "--heuristic", "dtr"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.addCleanup(self._reap, launcher)
        deadline = time.monotonic() + 60
        ranks = []
        while len(ranks) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
            ranks = [p for p in _children(launcher.pid)
                     if "--rank" in _args(p)]
        self.assertEqual(len(ranks), 2, "the ranks did not start")
        folder = _store_dir(ranks[0])
        self.addCleanup(shutil.rmtree, folder, True)
        self.addCleanup(self._kill_all, ranks)
        time.sleep(1)  # into training
        self.assertTrue(all(_alive(r) for r in ranks))
        return launcher, ranks, folder

    @staticmethod
    def _reap(launcher):
        if launcher.poll() is None:
            launcher.kill()
        launcher.communicate()

    @staticmethod
    def _kill_all(ranks):
        for r in ranks:
            if _alive(r):
                os.kill(r, signal.SIGKILL)

    def _assert_gone(self, ranks):
        deadline = time.monotonic() + GONE_WITHIN_S
        while any(_alive(r) for r in ranks) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual([r for r in ranks if _alive(r)], [],
                         "ranks outlived their launcher by %d s"
                         % GONE_WITHIN_S)

    def _stop(self, sig):
        launcher, ranks, folder = self._start()
        self.assertTrue(os.path.isdir(folder))
        launcher.send_signal(sig)
        launcher.wait(timeout=30)
        self._assert_gone(ranks)
        return launcher, folder

    def test_sigterm_stops_ranks_and_removes_the_folder(self):
        launcher, folder = self._stop(signal.SIGTERM)
        self.assertEqual(launcher.returncode, -signal.SIGTERM)
        self.assertFalse(os.path.exists(folder), folder)

    def test_sigint_stops_ranks_and_removes_the_folder(self):
        launcher, folder = self._stop(signal.SIGINT)
        self.assertEqual(launcher.returncode, -signal.SIGINT)
        self.assertFalse(os.path.exists(folder), folder)

    def test_sigkill_of_the_launcher_kills_the_ranks(self):
        # Nothing runs in a launcher killed so: the ranks die by their
        # death signal, and the folder stays (cleaned up by the test).
        launcher, _ = self._stop(signal.SIGKILL)
        self.assertEqual(launcher.returncode, -signal.SIGKILL)


if __name__ == "__main__":
    unittest.main()
