"""Free space where installs and caches are written: pip's cache, the temporary folder pip downloads into,
site-packages, conda and the Hugging Face cache, each with the mount it lives on, and every writable local mount
(the candidates a fix can point at). Python 3.6+, standard library only; reads, never writes.

The ``disks`` fact: ``{"locations": [{"role", "path", "mount", "fstype", "free_bytes", "total_bytes"}],
"mounts": [{"mount", "fstype", "free_bytes", "total_bytes"}]}``.
"""

import os
import sys
import sysconfig

from gpuvet.probe.facts import found

# Pseudo and read-only image filesystems: never where an install goes. Network filesystems are listed without
# statvfs (a dead NFS server would hang the probe).
_PSEUDO = {"proc", "sysfs", "devtmpfs", "devpts", "cgroup", "cgroup2", "securityfs", "pstore", "bpf", "tracefs",
           "debugfs", "mqueue", "hugetlbfs", "configfs", "fusectl", "autofs", "squashfs", "nsfs", "binfmt_misc",
           "rpc_pipefs", "efivarfs", "ramfs", "selinuxfs", "iso9660"}
_NETWORK = {"nfs", "nfs4", "cifs", "smb3", "fuse.sshfs", "9p", "ceph", "glusterfs", "fuse.s3fs", "lustre"}
_MAX_MOUNTS = 40


def _unescape(field):
    # /proc/mounts writes spaces, tabs and newlines in paths as octal escapes
    return field.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")


def read_mounts(path="/proc/mounts"):
    """[(mount point, fstype, options)] in file order; [] where there is no such file."""
    mounts = []
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                fields = line.split()
                if len(fields) >= 4:
                    mounts.append((_unescape(fields[1]), fields[2], fields[3].split(",")))
    except OSError:
        return []
    return mounts


def _space(path):
    try:
        stat = os.statvfs(path)
    except (OSError, AttributeError):
        return None, None
    return stat.f_bavail * stat.f_frsize, stat.f_blocks * stat.f_frsize


def _existing(path):
    """The path itself or its nearest existing parent (a cache not created yet goes where its parent is)."""
    path = os.path.abspath(path)
    while not os.path.exists(path):
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return path


def _mount_of(path, mounts):
    real = os.path.realpath(path)
    best = ("/", "")
    for point, fstype, _ in mounts:
        if (real == point or real.startswith(point.rstrip("/") + "/")) and len(point) >= len(best[0]):
            best = (point, fstype)
    return best


def temp_folder(environ):
    """The folder tempfile would pick, found without writing: tempfile.gettempdir() creates and deletes a probe file
    in each candidate, and the probe writes nothing. Same candidates, same order (TMPDIR, TEMP, TMP, then the
    platform's usual folders); the first that is a directory wins."""
    for name in ("TMPDIR", "TEMP", "TMP"):
        if environ.get(name) and os.path.isdir(environ[name]):
            return environ[name]
    for folder in ("/tmp", "/var/tmp", "/usr/tmp"):
        if os.path.isdir(folder):
            return folder
    return "/tmp"  # none is a directory: name the usual one, whose free space then reads as failed


def locations(environ=None):
    """(role, path) of each place an install or a download writes to."""
    environ = os.environ if environ is None else environ
    home = os.path.expanduser("~")
    cache = environ.get("XDG_CACHE_HOME") or os.path.join(home, ".cache")
    found_paths = [("pip_cache", environ.get("PIP_CACHE_DIR") or os.path.join(cache, "pip")),
                   ("tmp", temp_folder(environ)),
                   ("site_packages", sysconfig.get_paths().get("purelib") or sys.prefix)]
    conda = environ.get("CONDA_PREFIX") or (os.path.dirname(os.path.dirname(environ["CONDA_EXE"]))
                                            if environ.get("CONDA_EXE") else None)
    if conda:
        found_paths.append(("conda", conda))
    hf = environ.get("HF_HUB_CACHE") or (os.path.join(environ["HF_HOME"], "hub") if environ.get("HF_HOME") else
                                         os.path.join(cache, "huggingface", "hub"))
    found_paths.append(("hf_cache", hf))
    return found_paths


def collect(environ=None, mounts_file="/proc/mounts"):
    mounts = read_mounts(mounts_file)
    result = []
    for role, path in locations(environ):
        where = _existing(path)
        point, fstype = _mount_of(where, mounts)
        free, total = (None, None) if fstype in _NETWORK else _space(where)
        result.append({"role": role, "path": path, "mount": point, "fstype": fstype or None, "free_bytes": free,
                       "total_bytes": total})
    listed = []
    seen = set()
    for point, fstype, options in mounts:
        if fstype in _PSEUDO or "ro" in options or point in seen or point.startswith(("/proc", "/sys", "/dev")):
            continue
        if fstype == "tmpfs" and point not in [entry["mount"] for entry in result]:
            continue  # a tmpfs nobody installs into (/run, /dev/shm): not a candidate
        seen.add(point)
        free, total = (None, None) if fstype in _NETWORK else _space(point)
        listed.append({"mount": point, "fstype": fstype, "free_bytes": free, "total_bytes": total})
        if len(listed) >= _MAX_MOUNTS:
            break
    value = {"locations": result, "mounts": listed}  # type: dict
    # /dev/shm: where DataLoader workers and NCCL's shared-memory transport put their buffers; a container gets 64 MB
    # unless started with --shm-size or --ipc=host
    shm_free, shm_total = _space("/dev/shm") if os.path.isdir("/dev/shm") else (None, None)
    if shm_total is not None:
        value["shm"] = {"path": "/dev/shm", "free_bytes": shm_free, "total_bytes": shm_total}
    return found(value, "statvfs")
