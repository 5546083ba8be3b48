"""What a GPU rental platform keeps and throws away (kb/data/platforms.toml), said once for a machine on it.

The platform is the one the probe recognised from documented evidence (gpuvet.probe.rental) or the one the user
named with ``--platform``. The note lists each disk with what it keeps on a stop, in a saved image and after a
release, the platform's release rule and its own warnings, what its documentation says of the host's driver and the
images it offers, and one piece of advice derived from those facts: where the environment survives."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional

from gpuvet.findings import make
from gpuvet.models import Finding, Message, msg
from gpuvet.snapshot import SnapshotView

if TYPE_CHECKING:
    from gpuvet.kb import KnowledgeBase


def profile_of(kb: KnowledgeBase, name: str) -> Dict[str, Any]:
    """The profile of ``--platform NAME``; a usage error that lists the known platforms otherwise."""
    profile = kb.platform(name)
    if profile is None:
        from gpuvet.errors import UsageError

        raise UsageError.said("errors.platform_unknown", name=name, known=", ".join(kb.platform_names()))
    return profile


def size_text(disk: Dict[str, Any]) -> Optional[str]:
    """A disk's documented size ("50 GB+" for a minimum), or None when its documentation gives none."""
    size = disk.get("size_gib")
    return ("%d GB+" if disk.get("size_is_minimum") else "%d GB") % size if size else None


def platform_name(view: SnapshotView) -> Optional[str]:
    value = view.value("host.platform")
    return str(value["name"]) if isinstance(value, dict) and value.get("name") else None


def _kept(value: Any) -> Message:
    return msg("checks.platform.yes" if value is True else "checks.platform.no" if value is False
               else "checks.platform.unknown")


def disk_lines(profile: Dict[str, Any]) -> List[Message]:
    lines = []
    for disk in profile.get("disk", []):
        size = size_text(disk)
        lines.append(msg("checks.platform.disk" if size else "checks.platform.disk_unsized", path=disk["path"],
                         role=msg("checks.platform.role." + disk["role"]), size=size, stop=_kept(disk.get("kept_on_stop")),
                         image=_kept(disk.get("in_saved_image")), release=_kept(disk.get("kept_on_release"))))
    return lines


def advice(profile: Dict[str, Any]) -> Message:
    """Where pip's environment lives and what keeps it: derived from the disks' facts, never from the platform name."""
    disks = profile.get("disk", [])
    default = next((d for d in disks if d.get("pip_default")), None)
    if default is None:
        return msg("checks.platform.advice_unknown")
    if default.get("kept_on_stop") is False:
        keeper = next((d for d in disks if d.get("kept_on_stop") is True), None)
        if keeper is not None:
            return msg("checks.platform.advice_move_env", default=default["path"], keeper=keeper["path"])
    if default.get("in_saved_image") is True:
        data = next((d for d in disks if d.get("role") == "data" and d.get("in_saved_image") is False), None)
        if data is not None:
            return msg("checks.platform.advice_image", default=default["path"], data=data["path"])
    keeper = next((d for d in disks if d.get("kept_on_release") is True), None)
    if keeper is not None:
        return msg("checks.platform.advice_release", keeper=keeper["path"])
    return msg("checks.platform.advice_unknown")


# What a profile's [platform.driver] may say, in the order the sentences read.
DRIVER_FACTS = ("shown_cuda_is_max", "filter_by_cuda", "cuda_from_image")


def driver_keys(profile: Dict[str, Any]) -> List[str]:
    """The catalog ids of what the platform documents about the host's driver (only facts it states as true)."""
    driver = profile.get("driver") or {}
    return ["checks.platform.driver." + fact for fact in DRIVER_FACTS if driver.get(fact) is True]


def images_message(images: List[Dict[str, Any]]) -> Optional[Message]:
    """The images the platform's documentation names, each with what it says the image contains."""
    if not images:
        return None
    items = [msg("checks.platform.image", name=i["name"], contents=", ".join(i["contents"])) if i.get("contents")
             else msg("checks.platform.image_bare", name=i["name"]) for i in images]
    return msg("checks.platform.images", images=_chain(items, "checks.platform.list"))


def profile_sources(profile: Dict[str, Any]) -> List[str]:
    found = [profile.get("source"), profile.get("release_source"), profile.get("notes_source")]
    found += [d.get("source") for d in profile.get("disk", [])]
    found += [(profile.get("driver") or {}).get("source")] + [i.get("source") for i in profile.get("image", [])]
    return [s for s in found if s]



def _chain(messages: List[Message], key: str = "checks.platform.sentences") -> Message:
    """Several messages as one, joined as the catalog entry ``key`` joins two: one-sentence messages each keep their
    own full stop (``sentences``); list items are separated as the language separates them (``list``)."""
    if len(messages) == 1:
        return messages[0]
    return msg(key, first=messages[0], rest=_chain(messages[1:], key))


def platform_findings(view: SnapshotView, kb: KnowledgeBase) -> List[Finding]:
    name = platform_name(view)
    profile = kb.platform(name) if name else None
    if profile is None:
        return []
    notes = [msg("checks.platform.note." + note) for note in profile.get("notes", [])]
    notes += [msg("checks.platform.note." + d["note"]) for d in profile.get("disk", []) if d.get("note")]
    if profile.get("release_after_stopped_days"):
        notes.insert(0, msg("checks.platform.release_after", days=profile["release_after_stopped_days"]))
    notes += [msg(key) for key in driver_keys(profile)]
    images = images_message(profile.get("image", []))
    notes += [images] if images else []
    how = view.fact("host.platform")
    named_by = (msg("checks.platform.named_by_user") if how.get("source") == "--platform"
                else msg("checks.platform.named_by_evidence", evidence=", ".join((how.get("value") or {}).get("evidence") or [])))
    detail = "detail_unverified" if profile.get("unverified") else ("detail_as_of" if profile.get("as_of") else "")
    notes = notes or [msg("checks.platform.no_notes")]
    return [make("checks.platform", detail_variant=detail, platform=profile["display"], named_by=named_by,
                 disks=disk_lines(profile), notes=_chain(notes),
                 as_of=profile.get("as_of") or "", fix=advice(profile), sources=tuple(profile_sources(profile)))]
