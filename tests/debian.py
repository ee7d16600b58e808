"""Debian packages a test needs (chromium, tcpdump, tshark), installed by apt-get when missing and we are root:
README's test command sets nothing else up, and CI runs as root."""

from __future__ import annotations

import os
import shutil
import subprocess


def apt_install(*packages: str) -> str | None:
    """Install ``packages``; None when done, else why not (not root, no apt-get, apt-get's complaint)."""
    if not (hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get")):
        return f"{' '.join(packages)}: not installed (apt-get install, as root, installs them)"
    environment = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "-q", *packages]
    result = subprocess.run(install, capture_output=True, text=True, env=environment, timeout=900)
    if result.returncode != 0:   # a fresh image has no package lists yet
        subprocess.run(["apt-get", "update", "-q"], capture_output=True, env=environment, timeout=900)
        result = subprocess.run(install, capture_output=True, text=True, env=environment, timeout=900)
    return None if result.returncode == 0 else f"apt-get install {' '.join(packages)} failed: {result.stderr[-1500:]}"
