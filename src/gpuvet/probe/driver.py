"""The driver section, the GPU list and the topology: NVML first, then nvidia-smi, then /proc.

Each source that fails says why; one hung or broken tool degrades its facts to failed and the probe goes on.
"""

import re

from gpuvet.probe import facts, nvml, smi
from gpuvet.probe.files import ReadError, read_text
from gpuvet.probe.runner import run, which

PROC_VERSION = "/proc/driver/nvidia/version"
# "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 ..." or "... Open Kernel Module for x86_64  565.57.01  Release Build ..."
_NVRM = re.compile(r"NVRM version:.*?Kernel Module(?: for \S+)?\s+(\d+\.\d+(?:\.\d+)*)")


def parse_proc_version(text):
    match = _NVRM.search(text or "")
    return match.group(1) if match else None


def kernel_module(path=PROC_VERSION):
    try:
        text = read_text(path, allow_special=True)
    except ReadError as exc:
        return facts.missing("no NVIDIA kernel module loaded (%s)" % exc)
    version = parse_proc_version(text)
    if version is None:
        return facts.failed("%s has no NVRM version line" % path, detail=text[:300])
    return facts.found(version, "proc", path=path)


def collect(timeout, nvml_query=None):
    """{"driver": {...facts}, "gpus": fact, "topology": fact}. ``nvml_query``: an NVML query already started
    (nvml.start_query), else one is made now."""
    from_nvml = nvml_query.result() if nvml_query is not None else nvml.query(timeout)
    module = kernel_module()
    smi_state = _SmiState(timeout)
    errors = [from_nvml.error] if from_nvml.error else []

    version, cuda_max, gpus = from_nvml.version, from_nvml.cuda_max, from_nvml.gpus
    if not (facts.is_found(version) and facts.is_found(gpus)):
        from_smi = smi_state.query_gpus()
        version = facts.first_found(version, from_smi["version"])
        cuda_max = facts.first_found(cuda_max, from_smi["cuda_max"])
        gpus = facts.first_found(gpus, from_smi["gpus"])
        nvml_why = _nvml_trouble(from_nvml)
        if nvml_why:  # say why the answer comes from nvidia-smi: NVML hung or crashed
            for fact in (version, cuda_max, gpus):
                if facts.is_found(fact) and fact.get("source", "").startswith("nvidia-smi"):
                    fact["note"] = "NVML unusable (%s); read from %s instead" % (nvml_why, fact["source"])
        if from_smi["error"]:
            errors.insert(0, from_smi["error"])  # nvidia-smi's own words are what users search for
    gpus_count = len(facts.value_of(gpus, []) or [])
    topology = smi_state.topology() if gpus_count else facts.missing("no GPU visible")

    if not facts.is_found(version) and not errors:
        version = _why_no_driver(version, smi_state, module)
    driver = {
        "version": version,
        "cuda_max": cuda_max,
        "kernel_module": module,
        "nvml_binding": from_nvml.binding,
        "error": errors[0] if errors else facts.missing("no driver error reported"),
    }
    part = {"driver": driver, "gpus": gpus, "topology": topology}
    if from_nvml.p2p:
        part["gpu_p2p"] = from_nvml.p2p
    return part


def _nvml_trouble(from_nvml):
    """NVML's reason when it failed (timed out, crashed, errored), not when it is simply absent."""
    version = from_nvml.version
    if isinstance(version, dict) and version.get("status") == facts.FAILED:
        return version.get("reason")
    return None


def _why_no_driver(version, smi_state, module):
    reasons = [version.get("reason", "")]
    if smi_state.reason:
        reasons.append(smi_state.reason)
    if not facts.is_found(module):
        reasons.append(module.get("reason", ""))
    reason = "; ".join(r for r in reasons if r)
    if version.get("status") == facts.FAILED:
        return facts.failed(reason, detail=version.get("detail"))
    return facts.missing(reason)


class _SmiState(object):
    """Runs nvidia-smi at most as often as needed; after one timeout it is not asked again (it would hang again)."""

    def __init__(self, timeout):
        self.timeout = timeout
        self.path = which("nvidia-smi")
        self.reason = None if self.path else "nvidia-smi not found on PATH"
        self.unusable = self.path is None

    def _run(self, args):
        result = run([self.path] + args, timeout=self.timeout)
        if result.error and "timed out" in result.error:
            self.unusable = True
            self.reason = "nvidia-smi %s: %s" % (" ".join(args), result.error)
        return result

    def query_gpus(self):
        answer = {"version": None, "cuda_max": None, "gpus": None, "error": None}
        if self.unusable:
            why = facts.missing(self.reason)
            answer.update(version=why, cuda_max=why, gpus=why)
            return answer
        result = self._run(["-q", "-x"])
        known = smi.driver_error(result.stdout + "\n" + result.stderr)
        if known:
            text, kind = known
            answer["error"] = facts.found(text, "nvidia-smi", kind=kind)
            self.unusable = True
            self.reason = "nvidia-smi: " + text
            why = facts.failed("nvidia-smi reported: %s" % text)
            answer.update(version=why, cuda_max=why, gpus=why)
            return answer
        if result.ok:
            try:
                parsed = smi.parse_xml(result.stdout)
            except ValueError as exc:
                xml_failure = facts.failed("nvidia-smi -q -x output could not be parsed: %s" % exc,
                                           detail=result.stdout[:300])
            else:
                return self._answer(parsed, "nvidia-smi-xml", answer)
        else:
            xml_failure = facts.failed("nvidia-smi -q -x: %s" % result.why(), detail=result.stderr[-300:] or None)
            if self.unusable:
                answer.update(version=xml_failure, cuda_max=xml_failure, gpus=xml_failure)
                return answer
        result = self._run(["--query-gpu=" + ",".join(smi.CSV_FIELDS), "--format=csv,nounits"])
        if result.ok:
            try:
                parsed = smi.parse_csv(result.stdout)
            except ValueError as exc:
                # Keep why the fallback failed too: the user sees both reasons.
                xml_failure = facts.failed("%s; nvidia-smi --query-gpu output unreadable: %s"
                                           % (xml_failure["reason"], exc))
            else:
                parsed["cuda_version"] = None
                answer = self._answer(parsed, "nvidia-smi-csv", answer)
                answer["cuda_max"] = facts.missing("--query-gpu does not report the CUDA version (%s)"
                                                   % xml_failure["reason"])
                return answer
        answer.update(version=xml_failure, cuda_max=xml_failure, gpus=xml_failure)
        return answer

    @staticmethod
    def _answer(parsed, source, answer):
        answer["version"] = (facts.found(parsed["driver_version"], source) if parsed.get("driver_version")
                             else facts.missing("%s did not report a driver version" % source))
        answer["cuda_max"] = (facts.found(parsed["cuda_version"], source) if parsed.get("cuda_version")
                              else facts.missing("%s did not report a CUDA version" % source))
        answer["gpus"] = (facts.found(parsed["gpus"], source) if parsed.get("gpus") is not None
                          else facts.missing("%s listed no GPU fields" % source))
        return answer

    def topology(self):
        if self.unusable:
            return facts.missing(self.reason or "nvidia-smi not usable")
        result = self._run(["topo", "-m"])
        if not result.ok:
            return facts.failed("nvidia-smi topo -m: %s" % result.why())
        try:
            return facts.found(smi.parse_topo(result.stdout), "nvidia-smi")
        except ValueError as exc:
            return facts.failed("nvidia-smi topo -m output could not be parsed: %s" % exc,
                                detail=result.stdout[:300])
