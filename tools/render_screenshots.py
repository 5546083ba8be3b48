"""Render the real captures in tests/fixtures/ as terminal screenshots, then do to them what chat apps do.

Three renderers:

- ``xterm`` (the default where ``xterm``, ``Xvfb``, ``xwininfo`` and ImageMagick's ``import`` are on PATH): a real X
  terminal. ``Xvfb`` runs on a free display number (killed when the run ends, an error or ^C included) with a
  1920 x 1080 screen at 72 dpi (so ``-fs N`` is N pixels), and a 1920 x 2160 second screen for full-screen shots
  whose text would otherwise scroll off. Each capture is replayed (``cat``, after Ubuntu's coloured shell prompt
  naming the command) in ``xterm -fa 'DejaVu Sans Mono' -fs SIZE`` (or Noto Sans Mono CJK SC, a CJK font, for two
  styles), ``-bg``/``-fg`` and the 16-colour palette of a dark, light or solarized theme, ``-geometry COLSxROWS``
  fitted to the text or filling the screen; the screen is taken with ``import -window root`` and cut to the window
  (full screen: the whole 1920 x 1080, the terminal's background to the edges, as a maximised window shows it).
- ``terminal`` (the default without X): the capture replayed the same way in a detached **tmux** session (a VT
  emulator that keeps the cell grid); ``tmux capture-pane -e -p`` gives the grid with its colours, which headless
  **Chromium** rasterises as a ``<pre>`` in the same fonts, sizes and themes.
- ``pillow``: the earliest renderer, kept to compare: each character drawn in its cell by Pillow with the same fonts.

Console pages (a provider's instance page) are HTML pages rasterised by headless Chromium under ``xterm`` and
``terminal`` (a console page is a web page), drawn by Pillow under ``pillow``.

Then the chat variants: downscaled to 1080 pixels wide and saved as JPEG at quality 60-80 (WeChat and QQ re-encode
this way), or cropped to the text. A few console pages in Chinese and English (a provider's instance page: GPU model
and count, driver, CUDA, image); their values are real NVIDIA releases, their layout is made up (no provider's page
is copied).

Each image comes with the facts it must yield (``manifest.json``): taken from the capture's text by gpuvet's own
text parsers, so the OCR path is judged against what a paste of the same text gives.

    python tools/render_screenshots.py OUT_DIR [--small] [--renderer xterm|terminal|pillow] [--only PART ...]
        [--every-treatment]

``--only conda-list/ --only torch-version/`` renders just those captures (no console page); ``--every-treatment``
sends each style on in every chat treatment instead of one in rotation.
"""

from __future__ import annotations

import argparse
import contextlib
import html
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
MONO = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"
MONO_CJK = "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc#7"  # face 7 of the collection: Noto Sans Mono CJK SC
SANS_CJK = "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"

THEMES = {"dark": ((12, 12, 12), (204, 204, 204)), "light": ((255, 255, 255), (30, 30, 30)),
          "solarized": ((0, 43, 54), (147, 161, 161))}

# (fixture, what it shows): nvidia-smi tables of every era the fixtures hold, -L, nvcc, pip, conda list and the
# version torch prints (issue 35's layouts).
CAPTURES = [
    "nvidia-smi/grid-k520-1gpu_drv346.46.txt",
    "nvidia-smi/gtx-1080ti+titan-xp-4gpu_drv418.39.txt",
    "nvidia-smi/a100-sxm4-40gb-1gpu_drv450.80.02_mig-disabled.txt",
    "nvidia-smi/a800-80gb-pcie-8gpu_drv525.125.06_mig-pending.txt",
    "nvidia-smi/a10-1gpu_drv550.90.12.txt",
    "nvidia-smi/rtx-4090-8gpu_drv550.127.05.txt",
    "nvidia-smi/h100-nvl-2gpu_drv550.54.14.txt",
    "nvidia-smi/rtx-5090-1gpu_drv570.124.06.txt",
    "nvidia-smi/h100-80gb-hbm3-1gpu_drv590.48.01_load.txt",
    "nvidia-smi/rtx-2080-super-1gpu_drv610.57.04_idle.txt",
    "nvidia-smi/rtx-2080-super-1gpu_drv591.86_windows_idle.txt",
    "nvidia-smi/l40s-1gpu_drv595.80_idle.txt",
    "nvidia-smi-L/h100-80gb-hbm3-1gpu_drv590.48.01.txt",
    "nvidia-smi-L/tesla-p100-pcie-16gb-4gpu.txt",
    "nvcc-version/cuda-12.6_V12.6.85.txt",
    "nvcc-version/cuda-11.5_V11.5.119_ubuntu-apt.txt",
    "pip-list/torch2.13.0-cpu_local-venv.txt",
    "pip-freeze/torch2.13.0-cpu_local-venv.txt",
    "conda-list/torch2.0.1_pytorch-cuda11.8_py3.9_linux_excerpt.txt",
    "torch-version/torch2.13.0-cpu_local-venv.txt",
]

# Console pages: (language, lines, the facts they state). Driver/CUDA pairs are NVIDIA's (R535 reports CUDA 12.2,
# R550 12.4, R570 12.8); GPU names as nvidia-smi prints them.
CONSOLES = [
    ("zh", ["实例详情", "GPU型号: NVIDIA A100-SXM4-80GB x 8", "驱动版本: 535.104.05", "CUDA版本: 12.2",
            "镜像: PyTorch 2.1.0 / Python 3.10 / CUDA 12.1", "数据盘: 50GB"],
     {"driver": "535.104.05", "cuda": "12.2", "gpus": ["NVIDIA A100-SXM4-80GB"] * 8, "torch": "2.1.0"}),
    ("zh", ["容器实例", "显卡: NVIDIA GeForce RTX 4090 x 2", "驱动: 550.54.14", "CUDA版本: 12.4",
            "镜像: PyTorch 2.3.0 / Python 3.12 / CUDA 12.1"],
     {"driver": "550.54.14", "cuda": "12.4", "gpus": ["NVIDIA GeForce RTX 4090"] * 2, "torch": "2.3.0"}),
    ("en", ["Instance details", "GPU: NVIDIA H100 80GB HBM3 x 8", "Driver Version: 570.124.06", "CUDA Version: 12.8",
            "Image: PyTorch 2.6.0 / Python 3.11 / CUDA 12.4"],
     {"driver": "570.124.06", "cuda": "12.8", "gpus": ["NVIDIA H100 80GB HBM3"] * 8, "torch": "2.6.0"}),
]


# what ``print(torch.__version__, torch.version.cuda)`` writes: the two values and one space ("2.13.0+cpu None")
_PRINTED = re.compile(r"^(?P<version>\S+) (?P<cuda>\S+)$")


def expected_facts(text: str, relative: str = "") -> Dict[str, Any]:
    """What gpuvet's text parsers take from the capture: the facts the screenshot of it must yield. ``torch_cuda``:
    the CUDA torch was built with, "none" for a build without CUDA, where the capture states it. The output of
    ``python -c "import torch; print(torch.__version__, torch.version.cuda)"`` (``torch-version/``) is no paste kind:
    its two values are read as print() writes them."""
    from gpuvet import kb
    from gpuvet.ingest import detect_kind, parse

    facts: Dict[str, Any] = {}
    if relative.startswith("torch-version/"):
        printed = _PRINTED.match(text.strip())
        if printed is None:
            raise SystemExit("{} is not what print(torch.__version__, torch.version.cuda) writes".format(relative))
        facts["torch"] = printed.group("version")
        facts["torch_cuda"] = "none" if printed.group("cuda") == "None" else printed.group("cuda")
        return facts
    snapshot = parse(detect_kind(text) or "", text, "capture")
    driver = snapshot.get("driver") or {}
    if (driver.get("version") or {}).get("status") == "found":
        facts["driver"] = driver["version"]["value"]
    if (driver.get("cuda_max") or {}).get("status") == "found":
        facts["cuda"] = driver["cuda_max"]["value"]
    gpus = (snapshot.get("gpus") or {}).get("value")
    if gpus:
        models = kb.load()
        known = [models.gpu(g["name"]) for g in gpus]
        facts["gpus"] = [model.name if model else g["name"] for model, g in zip(known, gpus)]
        memory = [g.get("memory_total_mib") for g in gpus]
        if any(m is not None for m in memory):
            facts["memory_mib"] = memory
    toolkits = (snapshot.get("cuda_toolkits") or {}).get("value")
    if toolkits:
        facts["toolkit"] = toolkits[0]["version"]
    frameworks = (snapshot.get("frameworks") or {}).get("value") or {}
    if "torch" in frameworks:
        facts["torch"] = frameworks["torch"]["version"]
        if "cuda" in frameworks["torch"]:
            facts["torch_cuda"] = frameworks["torch"]["cuda"] or "none"
    return facts


def draw_terminal(text: str, font_path: str, size: int, theme: str, canvas: Optional[Tuple[int, int]]) -> Any:
    """The text on a terminal's cell grid: every character in its own cell, as a terminal emulator places it."""
    from PIL import Image, ImageDraw, ImageFont

    path, _, face = font_path.partition("#")
    font = ImageFont.truetype(path, size, index=int(face or 0))
    cell_w = int(round(font.getlength("M")))
    cell_h = int(round(size * 1.25))
    lines = text.rstrip("\n").split("\n")
    width = max(len(line) for line in lines) * cell_w + 2 * cell_w
    height = len(lines) * cell_h + 2 * cell_h
    background, foreground = THEMES[theme]
    if canvas:
        width, height = max(canvas[0], width), max(canvas[1], height)
    image = Image.new("RGB", (width, height), background)
    draw = ImageDraw.Draw(image)
    for row, line in enumerate(lines):
        for column, char in enumerate(line):
            if char != " ":
                draw.text((cell_w * (column + 1), cell_h * (row + 1)), char, font=font, fill=foreground)
    return image


def draw_console(lines: List[str], theme: str) -> Any:
    from PIL import Image, ImageDraw, ImageFont

    title = ImageFont.truetype(SANS_CJK, 30, index=2)  # Noto Sans CJK SC
    body = ImageFont.truetype(SANS_CJK, 22, index=2)
    background, foreground = THEMES[theme]
    image = Image.new("RGB", (1280, 120 + 48 * len(lines)), background)
    draw = ImageDraw.Draw(image)
    draw.text((40, 30), lines[0], font=title, fill=foreground)
    for row, line in enumerate(lines[1:]):
        key, _, value = line.partition(": ")
        draw.text((60, 100 + 48 * row), key, font=body, fill=(120, 120, 120) if theme == "light" else (150, 150, 150))
        draw.text((320, 100 + 48 * row), value, font=body, fill=foreground)
    return image


def chat(image: Any, quality: int, crop: bool) -> Tuple[Any, str]:
    """What a chat app sends on: the content's box cropped (a renter's own crop), then at most 1080 pixels wide."""
    from PIL import ImageOps

    if crop:
        background = image.getpixel((0, 0))
        inverted = ImageOps.invert(image) if sum(background) > 380 else image
        box = inverted.convert("L").point(lambda v: 255 if v > 60 else 0).getbbox()
        if box:
            image = image.crop((max(box[0] - 12, 0), max(box[1] - 12, 0), box[2] + 12, box[3] + 12))
    if image.width > 1080:
        image = image.resize((1080, round(image.height * 1080 / image.width)), resample=3)  # bicubic
    return image, "jpeg"


# ------------------------------------------------------------------------------------ the terminal renderer
# (command a capture shows, prompt): the shell prompt a renter's screenshot has above the output, Ubuntu's coloured
# PS1 ("\[\033[01;32m\]\u@\h\[\033[00m\]:\[\033[01;34m\]\w\[\033[00m\]\$ ")
COMMANDS = {"nvidia-smi": "nvidia-smi", "nvidia-smi-L": "nvidia-smi -L", "nvcc-version": "nvcc --version",
            "pip-list": "pip list", "pip-freeze": "pip freeze", "conda-list": "conda list",
            "torch-version": 'python -c "import torch; print(torch.__version__, torch.version.cuda)"'}
# what the prompt line shows before the command: a terminal fitted to the text is as wide as this line too
PROMPT_SHOWN = "root@gpu-node-07:~# "
PROMPT = "\\033[01;32mroot@gpu-node-07\\033[00m:\\033[01;34m~\\033[00m# "
# (background, foreground, the 16 ANSI colours) of each theme; dark is xterm's palette, light a light profile's,
# solarized Ethan Schoonover's
PALETTES = {
    "dark": ("#0c0c0c", "#cccccc", ["#000000", "#cd0000", "#00cd00", "#cdcd00", "#0000ee", "#cd00cd", "#00cdcd",
                                    "#e5e5e5", "#7f7f7f", "#ff0000", "#00ff00", "#ffff00", "#5c5cff", "#ff00ff",
                                    "#00ffff", "#ffffff"]),
    "light": ("#ffffff", "#1e1e1e", ["#000000", "#c91b00", "#00a600", "#a5a600", "#0225c7", "#c930c7", "#00a6b2",
                                     "#bfbfbf", "#686868", "#ff6e67", "#00b000", "#b0a000", "#2a45e0", "#e060e0",
                                     "#00b0c0", "#000000"]),
    "solarized": ("#002b36", "#93a1a1", ["#073642", "#dc322f", "#859900", "#b58900", "#268bd2", "#d33682",
                                         "#2aa198", "#eee8d5", "#002b36", "#cb4b16", "#586e75", "#657b83",
                                         "#839496", "#6c71c4", "#93a1a1", "#fdf6e3"]),
}
# the advance of one cell, in em: DejaVu Sans Mono's 1233/2048, Noto Sans Mono CJK's 500/1000 (Latin half-width)
ADVANCE = {"DejaVu Sans Mono": 1233 / 2048, "Noto Sans Mono CJK SC": 0.5}
PADDING = 8  # pixels around the grid, as a terminal window leaves


def tmux_grid(capture: Path, command: str, columns: int, rows: int) -> str:
    """The cell grid, with its colours as SGR sequences, of a tmux terminal of ``columns`` x ``rows`` after the
    prompt, the command, the capture replayed and the next prompt."""
    tmux = shutil.which("tmux")
    if tmux is None:
        raise SystemExit("the terminal renderer needs tmux (or use --renderer pillow)")
    with tempfile.TemporaryDirectory() as scratch:
        config = Path(scratch) / "tmux.conf"
        config.write_text("set -g status off\n", encoding="utf-8")  # no status line takes a row
        socket, done = str(Path(scratch) / "socket"), Path(scratch) / "done"
        # the replay, then the next prompt; the shell stays (as a terminal's does) while the grid is read
        script = "printf '{0}{1}\\n'; cat {2}; printf '{0}'; : > {3}; exec sleep 60".format(
            PROMPT, command, _quote(str(capture)), _quote(str(done)))
        base = [tmux, "-S", socket, "-f", str(config)]
        subprocess.run(base + ["new-session", "-d", "-x", str(columns), "-y", str(rows), "sh", "-c", script],
                       check=True)
        try:
            for _ in range(400):  # the replay takes milliseconds on an idle machine
                if done.exists():
                    break
                time.sleep(0.05)
            time.sleep(0.1)  # tmux draws what the pane wrote before the file appeared
            grid = subprocess.run(base + ["capture-pane", "-e", "-p"], capture_output=True, text=True,
                                  check=True).stdout
        finally:
            subprocess.run(base + ["kill-server"], capture_output=True, check=False)
    return grid


def _quote(path: str) -> str:
    return "'" + path.replace("'", "'\\''") + "'"


_SGR = re.compile(r"\x1b\[([0-9;]*)m")


def grid_html(grid: str, theme: str, font: str, size: int) -> str:
    """The grid as a page: one ``<pre>`` in the terminal's font and colours, every SGR run a ``<span>``."""
    background, foreground, colours = PALETTES[theme]
    line_height = round(size * 1.2)
    body = []
    state: Dict[str, Any] = {"fg": None, "bg": None, "bold": False, "reverse": False}
    position = 0
    for match in _SGR.finditer(grid):
        body.append(_span(grid[position:match.start()], state, colours, foreground, background))
        codes = [int(c) if c else 0 for c in match.group(1).split(";")]
        i = 0
        while i < len(codes):
            code = codes[i]
            if code == 0:
                state = {"fg": None, "bg": None, "bold": False, "reverse": False}
            elif code == 1:
                state["bold"] = True
            elif code == 22:
                state["bold"] = False
            elif code == 7:
                state["reverse"] = True
            elif code == 27:
                state["reverse"] = False
            elif 30 <= code <= 37 or 90 <= code <= 97:
                state["fg"] = colours[code - 30 if code < 90 else code - 82]
            elif 40 <= code <= 47 or 100 <= code <= 107:
                state["bg"] = colours[code - 40 if code < 100 else code - 92]
            elif code == 39:
                state["fg"] = None
            elif code == 49:
                state["bg"] = None
            elif code in (38, 48) and i + 2 < len(codes) and codes[i + 1] == 5:
                state["fg" if code == 38 else "bg"] = colours[codes[i + 2]] if codes[i + 2] < 16 else None
                i += 2
            elif code in (38, 48) and i + 4 < len(codes) and codes[i + 1] == 2:
                state["fg" if code == 38 else "bg"] = "#{:02x}{:02x}{:02x}".format(*codes[i + 2:i + 5])
                i += 4
            i += 1
        position = match.end()
    body.append(_span(grid[position:], state, colours, foreground, background))
    return ("<!doctype html><html><head><meta charset='utf-8'><style>html,body{{margin:0;background:{bg}}}"
            "pre{{margin:0;padding:{pad}px;font-family:'{font}';font-size:{size}px;line-height:{lh}px;color:{fg};"
            "font-variant-ligatures:none}}</style></head><body><pre>{body}</pre></body></html>").format(
                bg=background, pad=PADDING, font=font, size=size, lh=line_height, fg=foreground,
                body="".join(body))


def _span(text: str, state: Dict[str, Any], colours: List[str], foreground: str, background: str) -> str:
    if not text:
        return ""
    fg, bg = state["fg"], state["bg"]
    if state["bold"] and fg in colours[:8]:
        fg = colours[colours.index(fg) + 8]  # a terminal shows bold colours bright
    if state["reverse"]:
        fg, bg = bg or background, fg or foreground
    style = ";".join(part for part in (fg and "color:" + fg, bg and "background:" + bg,
                                       state["bold"] and "font-weight:bold") if part)
    escaped = html.escape(text, quote=False)
    return "<span style='{}'>{}</span>".format(style, escaped) if style else escaped


def chromium_png(page: str, width: int, height: int) -> Any:
    """The page as headless Chromium draws it in a ``width`` x ``height`` window (device scale 1). Chromium's window
    has a least size, below which it cuts the page short: a small window is drawn in a larger one and cropped."""
    from PIL import Image

    chromium = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if chromium is None:
        raise SystemExit("the terminal renderer needs headless Chromium (or use --renderer pillow)")
    with tempfile.TemporaryDirectory() as scratch:
        source = Path(scratch) / "page.html"
        source.write_text(page, encoding="utf-8")
        shot = Path(scratch) / "shot.png"
        subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        "--force-device-scale-factor=1", "--user-data-dir=" + str(Path(scratch) / "profile"),
                        "--screenshot=" + str(shot), "--window-size={},{}".format(max(width, 1280), max(height, 800)),
                        source.as_uri()],
                       capture_output=True, check=True, env={**os.environ, "DBUS_SESSION_BUS_ADDRESS": "disabled:"})
        with Image.open(shot) as image:
            return image.convert("RGB").crop((0, 0, width, height))


def terminal_screen(capture: Path, command: str, font: str, size: int, theme: str,
                    screen: Optional[Tuple[int, int]]) -> Any:
    """A screenshot of a tmux terminal showing ``capture``: full screen when ``screen`` is given (grown if the
    output would scroll off it), else a window fitted to the text."""
    text = capture.read_text(encoding="utf-8").rstrip("\n")
    advance = ADVANCE[font] * size
    line_height = round(size * 1.2)
    needed_columns = max(max(len(line) for line in text.split("\n")), len(PROMPT_SHOWN + command)) + 2
    needed_rows = text.count("\n") + 3  # the prompt and command, the output, the next prompt
    if screen:
        columns = max(int((screen[0] - 2 * PADDING) // advance), needed_columns)
        rows = max(int((screen[1] - 2 * PADDING) // line_height), needed_rows)
    else:
        columns, rows = needed_columns, needed_rows
    grid = tmux_grid(capture, command, columns, rows)
    width = int(columns * advance + 2 * PADDING + 0.999)
    height = rows * line_height + 2 * PADDING
    if screen:
        width, height = max(width, screen[0]), max(height, screen[1])
    return chromium_png(grid_html(grid, theme, font, size), width, height)


# ------------------------------------------------------------------------------------ the xterm renderer
XTERM_BORDER = 8  # xterm's internal border (-b), pixels around the cell grid
XTERM_SCREENS = ((1920, 1080), (1920, 2160))  # screen 0: the 1080p monitor; screen 1: a tall one (see xterm_screen)


class XServer:
    """Xvfb on a free display number, killed when the ``with`` block ends (an exception or ^C included). Screen 0
    is 1920 x 1080; screen 1, 1920 x 2160, takes the full-screen shots whose text would scroll off 1080 lines (the
    earlier renderer grew its screen the same way). 72 dpi, so that xterm's ``-fs N`` (points) is N pixels."""

    def __init__(self) -> None:
        self.process: Optional["subprocess.Popen[bytes]"] = None
        self.display = ""

    def __enter__(self) -> "XServer":
        xvfb = shutil.which("Xvfb")
        if xvfb is None:
            raise SystemExit("the xterm renderer needs Xvfb (or use --renderer terminal / pillow)")
        screens: List[str] = []
        for number, (width, height) in enumerate(XTERM_SCREENS):
            screens += ["-screen", str(number), "{}x{}x24".format(width, height)]
        for number in range(90, 200):
            if Path("/tmp/.X{}-lock".format(number)).exists() or Path("/tmp/.X11-unix/X{}".format(number)).exists():
                continue  # taken
            process = subprocess.Popen([xvfb, ":{}".format(number), *screens, "-dpi", "72", "-nolisten", "tcp"],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for _ in range(100):
                if process.poll() is not None or Path("/tmp/.X11-unix/X{}".format(number)).exists():
                    break
                time.sleep(0.05)
            if process.poll() is None:
                self.process, self.display = process, ":{}".format(number)
                time.sleep(0.2)  # the socket exists a moment before the server answers
                return self
        raise SystemExit("no free X display number for Xvfb (:90 to :199 all taken)")

    def __exit__(self, *exc: Any) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _xterm_font(font: str, size: int) -> str:
    """The -fa pattern. A CJK font's widest glyph is double width, and xterm takes its cell from the widest glyph:
    ``charwidth`` gives the cell of its half-width Latin glyphs instead (CJK text still takes two cells)."""
    if "CJK" in font:
        return "{}:charwidth={}".format(font, int(ADVANCE[font] * size + 0.5))
    return font


def _xterm(server: XServer, screen: int, title: str, font: str, size: int, theme: str, geometry: str,
           script: str) -> "subprocess.Popen[bytes]":
    xterm = shutil.which("xterm")
    if xterm is None:
        raise SystemExit("the xterm renderer needs xterm (or use --renderer terminal / pillow)")
    background, foreground, colours = PALETTES[theme]
    palette: List[str] = []
    for number, colour in enumerate(colours):
        palette += ["-xrm", "XTerm*VT100.color{}: {}".format(number, colour)]
    return subprocess.Popen(
        [xterm, "-display", "{}.{}".format(server.display, screen), "-title", title, "-fa", _xterm_font(font, size),
         "-fs", str(size), "-b", str(XTERM_BORDER), "-bw", "0", "+sb", "-bg", background, "-fg", foreground, *palette,
         "-xrm", "XTerm*VT100.cursorBlink: false", "-geometry", geometry, "-e", "sh", "-c", script],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _window_size(server: XServer, screen: int, title: str) -> Optional[Tuple[int, int]]:
    found = subprocess.run(["xwininfo", "-display", "{}.{}".format(server.display, screen), "-name", title],
                           capture_output=True, text=True, check=False).stdout
    width = re.search(r"Width:\s*(\d+)", found)
    height = re.search(r"Height:\s*(\d+)", found)
    if "IsViewable" not in found or not width or not height:
        return None  # not mapped yet: its size is not the one asked for yet
    return int(width.group(1)), int(height.group(1))


def _stop(process: "subprocess.Popen[bytes]") -> None:
    process.terminate()
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


_CELLS: Dict[Tuple[str, int], Tuple[int, int]] = {}


def _opened(server: XServer, screen: int, title: str, process: "subprocess.Popen[bytes]") -> Optional[Tuple[int, int]]:
    """The size of the window ``title`` once it is mapped; None when xterm has not shown it within 5 s (now and
    then an xterm started on Xvfb never maps its window: the caller starts another)."""
    for _ in range(100):
        measured = _window_size(server, screen, title)
        if measured or process.poll() is not None:
            return measured
        time.sleep(0.05)
    return None


def xterm_cell(server: XServer, font: str, size: int) -> Tuple[int, int]:
    """(width, height) in pixels of one xterm cell in ``font`` at ``size``: a 10 x 5 window is opened and measured."""
    if (font, size) not in _CELLS:
        title = "gpuvet-probe-{}".format(os.getpid())
        for _ in range(3):
            process = _xterm(server, 0, title, font, size, "dark", "10x5+0+0", "exec sleep 30")
            try:
                measured = _opened(server, 0, title, process)
            finally:
                _stop(process)
            if measured:
                break
        else:
            raise SystemExit("xterm did not open a window on Xvfb {} ({} {} px)".format(server.display, font, size))
        _CELLS[(font, size)] = ((measured[0] - 2 * XTERM_BORDER) // 10, (measured[1] - 2 * XTERM_BORDER) // 5)
    return _CELLS[(font, size)]


def xterm_screen(server: XServer, capture: Path, command: str, font: str, size: int, theme: str,
                 screen: Optional[Tuple[int, int]]) -> Any:
    """A screenshot of a real xterm showing ``capture`` replayed under the prompt: the whole 1920 x 1080 screen
    (``import -window root``) with the terminal filling it when ``screen`` is given, else the window fitted to the
    text. Text taller than the screen is shot on the tall screen, so no line scrolls off."""
    from PIL import Image

    text = capture.read_text(encoding="utf-8").rstrip("\n")
    cell_w, cell_h = xterm_cell(server, font, size)
    needed_columns = max(max(len(line) for line in text.split("\n")), len(PROMPT_SHOWN + command)) + 2
    needed_rows = text.count("\n") + 3  # the prompt and command, the output, the next prompt
    if screen:
        columns = max((screen[0] - 2 * XTERM_BORDER) // cell_w, needed_columns)
        rows = (screen[1] - 2 * XTERM_BORDER) // cell_h
        if rows < needed_rows:
            rows = needed_rows
    else:
        columns, rows = needed_columns, needed_rows
    height = rows * cell_h + 2 * XTERM_BORDER
    number = 0 if height <= XTERM_SCREENS[0][1] else 1
    if height > XTERM_SCREENS[number][1]:
        raise SystemExit("{} is too tall for the screens of the xterm renderer".format(capture))
    title = "gpuvet-shot-{}".format(os.getpid())
    geometry = "{}x{}+0+0".format(columns, rows)
    shot, window = b"", None
    for _ in range(3):  # an xterm that never maps its window is replaced (see _opened)
        with tempfile.TemporaryDirectory() as scratch:
            done = Path(scratch) / "done"
            script = "printf '{0}{1}\\n'; cat {2}; printf '{0}'; : > {3}; exec sleep 60".format(
                PROMPT, command, _quote(str(capture)), _quote(str(done)))
            process = _xterm(server, number, title, font, size, theme, geometry, script)
            try:
                window = _opened(server, number, title, process)
                if window is None:
                    continue
                for _ in range(400):  # the replay takes milliseconds on an idle machine
                    if done.exists():
                        break
                    time.sleep(0.05)
                else:
                    raise SystemExit("xterm did not replay {} on Xvfb {}".format(capture, server.display))
                time.sleep(0.5)  # xterm draws what it was written after the shell wrote the file
                shot = subprocess.run(["import", "-display", "{}.{}".format(server.display, number), "-window",
                                       "root", "png:-"], capture_output=True, check=True).stdout
                break
            finally:
                _stop(process)
    if window is None:
        raise SystemExit("xterm did not open a window on Xvfb " + server.display)
    with Image.open(io.BytesIO(shot)) as image:
        terminal = image.convert("RGB").crop((0, 0, window[0], window[1]))
    if not screen:
        return terminal
    # a maximised terminal: its background reaches the screen's edges (the cell grid rarely divides the screen)
    canvas = Image.new("RGB", (XTERM_SCREENS[0][0], max(XTERM_SCREENS[0][1], window[1])), PALETTES[theme][0])
    canvas.paste(terminal, (0, 0))
    return canvas


def default_renderer() -> str:
    """xterm under Xvfb when xterm, Xvfb, xwininfo and ImageMagick's import are installed; else tmux + Chromium."""
    return "xterm" if all(shutil.which(tool) for tool in ("xterm", "Xvfb", "xwininfo", "import")) else "terminal"


def console_page(lines: List[str], theme: str) -> Any:
    """A provider's instance page as a browser draws it: a title, then label and value columns."""
    background, foreground, _ = PALETTES["light" if theme == "light" else "dark"]
    label = "#787878" if theme == "light" else "#969696"
    rows = "".join("<tr><th>{}</th><td>{}</td></tr>".format(html.escape(key), html.escape(value))
                   for key, _, value in (line.partition(": ") for line in lines[1:]))
    page = ("<!doctype html><html><head><meta charset='utf-8'><style>body{{margin:0;padding:30px 40px;"
            "background:{bg};color:{fg};font-family:'Noto Sans CJK SC'}}h1{{font-size:30px;font-weight:normal;"
            "margin:0 0 24px}}th{{color:{label};font-weight:normal;text-align:left;width:240px;padding:10px 20px}}"
            "td{{padding:10px 0}}table{{font-size:22px;border-collapse:collapse}}</style></head><body><h1>{title}"
            "</h1><table>{rows}</table></body></html>").format(bg=background, fg=foreground, label=label,
                                                              title=html.escape(lines[0]), rows=rows)
    return chromium_png(page, 1280, 120 + 48 * len(lines))


# (theme, font, pixels, screen): full screen on a 1920 x 1080 display, or a window fitted to the text
TERMINAL_STYLES = [("dark", "DejaVu Sans Mono", 16, (1920, 1080)), ("light", "DejaVu Sans Mono", 14, None),
                   ("solarized", "Noto Sans Mono CJK SC", 18, None), ("light", "Noto Sans Mono CJK SC", 15, (1920, 1080))]
PILLOW_STYLES = [("dark", MONO, 16, (1920, 1080)), ("light", MONO, 14, None), ("solarized", MONO_CJK, 18, None)]


def corpus(small: bool, renderer: str = "terminal", server: Optional[XServer] = None,
           only: Sequence[str] = (), every_treatment: bool = False,
           ) -> List[Tuple[str, Any, str, Dict[str, Any], Dict[str, Any]]]:
    """(file name, image, format, save options, expected facts) for every image of the corpus; ``server``: the
    Xvfb the xterm renderer draws on. ``only``: just the captures whose path holds one of these strings, in every
    style (with ``small``: both styles of the kept set), and no console page; ``every_treatment``: each style sent on in every chat treatment, not one of them in rotation."""
    styles: List[Tuple[str, str, int, Optional[Tuple[int, int]]]] = list(
        PILLOW_STYLES if renderer == "pillow" else TERMINAL_STYLES)
    chats = [(None, False), (75, False), (60, True), (80, True)]
    if small:
        styles, chats = styles[:2], [(None, False), (70, True)]
    images: List[Tuple[str, Any, str, Dict[str, Any], Dict[str, Any]]] = []
    for number, relative in enumerate(CAPTURES):
        if only and not any(part in relative for part in only):
            continue
        capture = FIXTURES / relative
        text = capture.read_text(encoding="utf-8")
        facts = expected_facts(text, relative)
        stem = relative.replace("/", "__").rsplit(".", 1)[0]
        for style_number, (theme, font, size, canvas) in enumerate(styles):
            if small and not only and (number + style_number) % 3:
                continue  # the kept set: a third of the captures per style, every era still shown (--only: all)
            if renderer == "xterm":
                assert server is not None
                screen = xterm_screen(server, capture, COMMANDS[relative.split("/")[0]], font, size, theme, canvas)
                look = "{}{}{}".format(theme, size, "-cjk" if "CJK" in font else "")
            elif renderer == "terminal":
                screen = terminal_screen(capture, COMMANDS[relative.split("/")[0]], font, size, theme, canvas)
                look = "{}{}{}".format(theme, size, "-cjk" if "CJK" in font else "")
            else:
                screen = draw_terminal(text, font, size, theme, canvas)
                look = "{}{}".format(theme, size)
            # the full corpus rotates the chat treatments over styles: every capture as sent, recompressed, cropped
            # and recompressed (an OCR run over the corpus stays short on a shared machine)
            for quality, crop in chats if small or every_treatment else [chats[(number + style_number) % len(chats)]]:
                if quality is None:
                    name = f"{stem}__{look}.png"
                    images.append((name, screen, "png", {"optimize": True}, facts))
                else:
                    sent, fmt = chat(screen, quality, crop)
                    name = f"{stem}__{look}__chat{'-crop' if crop else ''}-q{quality}.jpg"
                    images.append((name, sent, fmt, {"quality": quality}, facts))
    for number, (lang, lines, facts) in enumerate(CONSOLES if not only else ()):
        for theme in ("light", "dark") if not small else ("light",):
            page = draw_console(lines, theme) if renderer == "pillow" else console_page(lines, theme)
            images.append((f"console-{lang}-{number}__{theme}.png", page, "png", {"optimize": True}, facts))
            if not small:
                sent, fmt = chat(page, 70, False)
                images.append((f"console-{lang}-{number}__{theme}__chat-q70.jpg", sent, fmt, {"quality": 70}, facts))
    return images


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--small", action="store_true", help="the small set kept in tests/fixtures/screenshots")
    parser.add_argument("--renderer", choices=("xterm", "terminal", "pillow"), default=default_renderer(),
                        help="xterm under Xvfb (the default where both are installed), tmux + headless Chromium "
                             "(the default otherwise), or Pillow drawing the cell grid")
    parser.add_argument("--only", action="append", default=[], metavar="PART",
                        help="only the captures whose path holds PART (repeatable; e.g. conda-list/), no console page")
    parser.add_argument("--every-treatment", action="store_true",
                        help="every style sent on in every chat treatment (the full corpus rotates them)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT / "src"))
    args.out.mkdir(parents=True, exist_ok=True)
    manifest = {}
    with contextlib.ExitStack() as stack:
        server = stack.enter_context(XServer()) if args.renderer == "xterm" else None
        for name, image, fmt, options, facts in corpus(args.small, args.renderer, server, args.only,
                                                       args.every_treatment):
            image.save(args.out / name, format=fmt.upper(), **options)
            manifest[name] = facts
    (args.out / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True, ensure_ascii=False) + "\n",
                                            encoding="utf-8")
    print(f"{len(manifest)} images in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
