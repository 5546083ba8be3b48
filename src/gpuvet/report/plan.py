"""The text form of a ``plan`` document."""

from __future__ import annotations

from typing import Any, Dict, List

from gpuvet.checks.platform import images_message, size_text
from gpuvet.i18n import render, text

SHOWN = 20  # GPU models listed in text unless --all; the count of the rest is always said


def localize_plan(plan: Dict[str, Any], lang: str) -> Dict[str, Any]:
    """The plan ``make_plan`` gives, its catalog keys and Messages said in ``lang``: the document every format reads."""
    plan = dict(plan)
    plan["assumptions"] = [render(m, lang) for m in plan["assumptions"]]
    plan["questions"] = [text(lang, q) for q in plan["questions"]]
    plan["nvlink"] = text(lang, plan["nvlink"]) if plan.get("nvlink") else None
    plan["gpus"] = [dict(row, reason=text(lang, row["reason"]) if row.get("reason") else None) for row in plan["gpus"]]
    if plan.get("platform"):
        platform = dict(plan["platform"])
        platform["notes"] = [text(lang, note) for note in platform["notes"]]
        platform["driver"] = [text(lang, fact) for fact in platform["driver"]]
        platform["advice"] = render(platform["advice"], lang)
        platform["answers"] = [text(lang, q) for q in platform["answers"]]
        plan["platform"] = platform
    return plan


def render_plan_text(document: Dict[str, Any], lang: str, color: bool = False, width: int = 100,
                     show_all: bool = False) -> str:
    plan = document["plan"]
    inputs = plan["inputs"]
    memory = plan["memory_gib"]
    fitting = [row for row in plan["gpus"] if row["fits"]]
    # The answer first: the smallest rental that holds the workload (the rows are sorted so), or that none does.
    if fitting:
        best = fitting[0]
        answer = text(lang, "plan.answer", count=best["count"] or 1, model=best["model"], memory=f"{best['memory_gib']:g}",
                      per_gpu=best.get("per_gpu_gib") or memory["per_gpu"], fitting=len(fitting),
                      total=len(plan["gpus"]))
    else:
        answer = text(lang, "plan.answer_none", per_gpu=memory["per_gpu"], total=len(plan["gpus"]))
    lines = [
        answer,
        text(lang, "plan.heading", model=(plan.get("model") or {}).get("display", "?"), params=f"{inputs['parameters'] / 1e9:.3g}B",
             task=inputs["task"], precision=inputs["precision"], gpus=inputs["gpus"] or "?"),
        "",
        text(lang, "plan.memory", **memory),
        "",
        text(lang, "plan.assumptions"),
    ]
    lines += [f"  - {a}" for a in plan["assumptions"]]
    lines += ["", text(lang, "plan.gpus")]
    rows = plan["gpus"] if show_all else plan["gpus"][:SHOWN]
    for row in rows:
        mark = "✔" if row["fits"] else "✘"
        count = f"{row['count']} ×" if row["count"] else "—"
        reason = f"  ({row['reason']})" if row.get("reason") else ""
        lines.append(f"  {mark} {count} {row['model']} ({row['memory_gib']:g} GiB){reason}")
    if len(rows) < len(plan["gpus"]):
        lines.append("  " + text(lang, "plan.more", shown=len(rows), total=len(plan["gpus"]), fitting=len(fitting)))
    software = plan["software"]
    lines += ["", text(lang, "plan.software")]
    if software.get("known"):
        lines.append(text(lang, "plan.software_line", framework=software["framework"], version=software["version"], python=software["python"], variant=software["default_variant"], driver=software.get("min_driver") or "-"))
        for name, variant in software["variants"].items():
            lines.append(f"  - {name}: CUDA {variant['cuda'] or '-'}, cuDNN {variant['cudnn'] or '-'}, NCCL {variant['nccl'] or '-'}, driver >= {variant['min_driver'] or '-'}")
    else:
        lines.append("  " + text(lang, "plan.software_unknown", framework=software.get("framework")))
    if plan.get("nvlink"):
        lines += ["", plan["nvlink"]]
    if plan.get("platform"):
        lines += [""] + _platform_lines(plan["platform"], lang)
    lines += ["", text(lang, "plan.questions")]
    lines += [f"  [ ] {q}" for q in plan["questions"]]
    return "\n".join(lines) + "\n"


def _platform_lines(platform: Dict[str, Any], lang: str) -> List[str]:
    """What the platform's documentation says about its disks, and what that means for this workload."""
    mark = {True: text(lang, "checks.platform.yes"), False: text(lang, "checks.platform.no"), None: "?"}
    lines = [text(lang, "plan.platform.heading", platform=platform["display"])
             + (" " + text(lang, "plan.platform.unverified") if platform.get("unverified") else "")]
    for disk in platform["disks"]:
        size = size_text(disk) or "?"
        lines.append("  - " + text(lang, "plan.platform.disk", path=disk["path"], size=size, stop=mark[disk.get("kept_on_stop")],
                                   image=mark[disk.get("in_saved_image")], release=mark[disk.get("kept_on_release")]))
    if platform.get("release_after_stopped_days"):
        lines.append("  " + text(lang, "checks.platform.release_after", days=platform["release_after_stopped_days"]))
    lines += ["  " + note for note in platform["notes"] + platform.get("driver", [])]
    images = images_message(platform.get("images", []))
    if images:
        lines.append("  " + render(images, lang))
    if platform["weights_fit_on"]:
        lines.append("  " + text(lang, "plan.platform.weights", weights=platform["weights_gib"],
                                 disks=", ".join(platform["weights_fit_on"])))
    lines.append("  " + platform["advice"])
    return lines
