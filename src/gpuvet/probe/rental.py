"""Which GPU rental platform this instance runs on, from evidence the platforms document: an environment variable
they set in every instance (only its name is read, never its value), or the directories their documentation names.

A platform is named only when its evidence is all there and no other platform's is; anything less is no answer
(``gpuvet check --platform NAME`` says it instead). The platforms' disks and rules are knowledge-base data
(kb/data/platforms.toml); this module holds only what recognises them. Standard library only, Python 3.6+.
"""

import os

from gpuvet.probe import facts

# (platform, environment variables that must all be set, directories that must all exist, source)
EVIDENCE = (
    ("runpod", ("RUNPOD_POD_ID",), (),
     "https://github.com/runpod/docs/blob/21b2ef1b998168c856b75187871f0a4421a5c8f2/pods/references/environment-variables.mdx"),
    ("vastai", ("VAST_CONTAINERLABEL",), (),
     "https://github.com/vast-ai/docs/blob/c624622622496828c1ae58edec481bba1f5d675d/guides/instances/docker-environment.mdx"),
    ("pai-dsw", ("DSW_INSTANCE_ID",), (),
     "https://github.com/aliyun/pai-python-sdk/blob/0c30d855ae27a23317182f3aca7707e38d2ea007/pai/session.py#L262-L263"),
    ("autodl", (), ("/root/autodl-tmp", "/root/autodl-fs"), "https://www.autodl.com/docs/env/"),
)


def collect(environ=None, isdir=os.path.isdir):
    """The ``host.platform`` fact: {"name", "evidence": [...]}; missing when no platform's evidence is complete."""
    environ = os.environ if environ is None else environ
    matched = []
    for name, variables, folders, source in EVIDENCE:
        if (variables or folders) and all(v in environ for v in variables) and all(isdir(f) for f in folders):
            matched.append((name, list(variables) + list(folders), source))
    if len(matched) != 1:
        reason = "no rental platform's evidence found" if not matched else (
            "evidence of several platforms (%s): none is named" % ", ".join(m[0] for m in matched))
        return facts.missing(reason)
    name, evidence, source = matched[0]
    return facts.found({"name": name, "evidence": evidence}, "platform evidence", evidence_source=source)
