"""What dtr.compare writes: the results table and the plot, each written
whole under a temporary name and then renamed into place, so a stopped
comparison never leaves a half-written file that reads as a complete one."""
import csv
import os
import tempfile

COLUMNS = ("method", "setting", "peak_bytes", "step_ms", "identical")


def _replace(path, write, mode="w"):
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".",
                               dir=folder)
    try:
        with os.fdopen(fd, mode) as f:
            write(f)
        umask = os.umask(0)  # mkstemp's 0600 becomes what open() would give
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def write_csv(path, rows):
    def write(f):
        out = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        out.writeheader()
        out.writerows(rows)
    _replace(path, write)


def write_text(path, text):
    _replace(path, lambda f: f.write(text))


def plot(path, rows, title):
    """Time per step against peak memory, one curve or point per method;
    False if matplotlib is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for method in dict.fromkeys(r["method"] for r in rows):
        points = sorted((r["peak_bytes"] / 2**20, r["step_ms"])
                        for r in rows if r["method"] == method)
        xs, ys = zip(*points)
        ax.plot(xs, ys, marker="o", linestyle="-" if len(xs) > 1 else "",
                label=method)
    for r in rows:  # compile's fractions do not order its peaks
        if r["method"] == "compile-budget":
            ax.annotate(f"{float(r['setting']):g}",
                        (r["peak_bytes"] / 2**20, r["step_ms"]),
                        textcoords="offset points", xytext=(4, 4),
                        fontsize=8)
    ax.set_xlabel("peak memory (MiB, the process's tensor allocator)")
    ax.set_ylabel("time per training step (ms, median)")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    _replace(path, lambda f: fig.savefig(f, format="png", dpi=110), "wb")
    plt.close(fig)
    return True
