"""The user's calibrated specs: 'tcadvisor calibrate' writes into a per-user cache, and without --gpu the
newest calibration of the detected GPU is used (nvidia-smi faked, the cache in a temporary directory)."""
import argparse
import os
import sys
import time

import pytest

from _validate_data import h100_like
from tcadvisor import hardware
from tcadvisor.errors import TcAdvisorError
from tcadvisor.hardware import (calibrated_spec_for_device, calibrated_spec_path, calibrated_specs_dir, cache_dir,
                                resolve_gpu)
from tcadvisor.hardware_schema import MAX_FILE_BYTES
from tcadvisor.validate import calibrate as cal

H100 = "NVIDIA H100 80GB HBM3"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty cache (TCADVISOR_CACHE_DIR) and a fake nvidia-smi that reports an H100 SXM."""
    monkeypatch.setenv("TCADVISOR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(hardware, "detect_local_gpu_name", lambda: H100)
    specs = tmp_path / "cache" / "specs"
    specs.mkdir(parents=True)
    return specs


def write_calibration(directory, device=H100, date="2026-11-23", bandwidth=3.021e12, name=None):
    """A calibration as 'calibrate' writes it into the cache (device_names: the device)."""
    c = h100_like()
    c.device, c.date = device, date
    c.bandwidth.value = bandwidth
    path = directory / (name or f"{device.lower().replace(' ', '-')}-{date}.yaml")
    path.write_text(cal.spec_text(c, (device,)))
    return path


def test_cache_directory_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.delenv("TCADVISOR_CACHE_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert cache_dir() == tmp_path / "home" / ".cache" / "tcadvisor"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")  # not absolute: ignored, as XDG says
    assert cache_dir() == tmp_path / "home" / ".cache" / "tcadvisor"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "tcadvisor"
    monkeypatch.setenv("TCADVISOR_CACHE_DIR", str(tmp_path / "mine"))
    assert cache_dir() == tmp_path / "mine" and calibrated_specs_dir() == tmp_path / "mine" / "specs"
    assert calibrated_spec_path(H100, "2026-11-25") == tmp_path / "mine" / "specs" / \
        "nvidia-h100-80gb-hbm3-2026-11-25.yaml"


def test_detected_gpu_uses_the_calibrated_spec(cache):
    path = write_calibration(cache)
    r = resolve_gpu(None)
    assert r.spec.path == path and r.spec.bandwidth.value == pytest.approx(3.021e12)
    assert r.note == f"using your calibrated spec {path} for {H100} (calibrated 2026-11-23)"


def test_the_newest_calibration_wins(cache):
    write_calibration(cache, date="2026-11-23", bandwidth=2.9e12)
    newest = write_calibration(cache, date="2026-11-25", bandwidth=3.1e12)
    older_but_written_later = write_calibration(cache, date="2026-11-24", bandwidth=3.0e12)
    os.utime(older_but_written_later, (time.time() + 100, time.time() + 100))
    assert calibrated_spec_for_device(H100).path == newest
    assert resolve_gpu(None).spec.bandwidth.value == pytest.approx(3.1e12)
    # same calibration date: the file written last
    again = write_calibration(cache, date="2026-11-25", bandwidth=3.2e12, name="again.yaml")
    os.utime(again, (time.time() + 200, time.time() + 200))
    assert calibrated_spec_for_device(H100).path == again


def test_another_gpus_calibration_is_not_used(cache):
    write_calibration(cache, device="NVIDIA H200")
    r = resolve_gpu(None)
    assert r.spec.key == "h100-sxm" and r.note.startswith(f"using the spec of the detected GPU {H100!r}")


def test_gpu_option_always_wins(cache):
    write_calibration(cache)
    assert resolve_gpu("a100").spec.key == "a100-80gb-pcie" and resolve_gpu("a100").note is None


def test_no_gpu_detected_keeps_the_default(cache, monkeypatch):
    write_calibration(cache)
    monkeypatch.setattr(hardware, "detect_local_gpu_name", lambda: None)
    r = resolve_gpu(None)
    assert r.spec.default and "no GPU detected" in r.note


def test_a_broken_cached_file_is_skipped_with_one_line(cache, capsys):
    (cache / "broken.yaml").write_text("name: [\n")
    r = resolve_gpu(None)
    assert r.spec.key == "h100-sxm"  # the bundled spec, as without a cache
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "broken.yaml: not valid YAML" in err[0] and err[0].startswith("tcadvisor: warning: skipping")
    good = write_calibration(cache)
    assert resolve_gpu(None).spec.path == good


def test_oversized_and_nameless_files_are_not_used(cache, capsys):
    big = cache / "big.yaml"
    big.write_bytes(b"#" * (MAX_FILE_BYTES + 1))
    c = h100_like()
    (cache / "o.yaml").write_text(cal.spec_text(c))  # as -o writes it: device_names []
    assert calibrated_spec_for_device(H100) is None
    err = capsys.readouterr().err
    assert "big.yaml" in err and "too large" in err
    assert "o.yaml names no GPU (device_names is empty), so it is never picked" in err


def test_the_cache_is_read_with_a_bound_on_the_number_of_files(cache, monkeypatch, capsys):
    monkeypatch.setattr(hardware, "MAX_CACHED_SPECS", 3)
    for day in range(10, 16):
        path = write_calibration(cache, date=f"2026-11-{day}")
        os.utime(path, (1e9 + day, 1e9 + day))
    newest = calibrated_spec_for_device(H100)
    assert newest.date == "2026-11-15"
    assert "6 spec files" in capsys.readouterr().err


def test_without_a_calibration_date_the_file_date_is_said(cache):
    path = write_calibration(cache)
    path.write_text(path.read_text().replace(" (calibrated 2026-11-23)", "").replace(", 2026-11-23", ""))
    os.utime(path, (1.7e9, 1.7e9))
    r = resolve_gpu(None)
    assert r.spec.path == path and r.note.endswith("(file dated 2023-11-14)")


# --------------------------------------------------------------------------- calibrate writes into the cache


@pytest.fixture
def fake_calibration(monkeypatch):
    """cmd_calibrate without a GPU: CuPy answers, the measurements are the project's H100's."""
    from tcadvisor.gpu import backend

    ran = []
    monkeypatch.setattr(backend, "cupy", lambda: object())
    monkeypatch.setattr(cal, "calibrate", lambda settings, progress: ran.append(1) or h100_like())
    return ran


def _args(output=None):
    return argparse.Namespace(output=output, quick=True, repeats=None)


def test_calibrate_without_output_writes_into_the_cache(cache, fake_calibration, capsys):
    from tcadvisor.validate.commands import cmd_calibrate

    assert cmd_calibrate(_args()) == 0
    target = cache / "nvidia-h100-80gb-hbm3-2026-11-23.yaml"
    out = capsys.readouterr()
    assert out.out == "" and f"wrote {target}: used for {H100} whenever no --gpu is given" in out.err
    spec = hardware.load_spec_file(target)
    assert spec.device_names == (H100,)
    r = resolve_gpu(None)
    assert r.spec.path == target and "calibrated 2026-11-23" in r.note


def test_calibrate_output_file_and_stdout(tmp_path, cache, fake_calibration, capsys):
    from tcadvisor.validate.commands import cmd_calibrate

    assert cmd_calibrate(_args(str(tmp_path / "mine.yaml"))) == 0
    assert hardware.load_spec_file(tmp_path / "mine.yaml").device_names == ()  # picked only with --gpu
    assert f"wrote {tmp_path / 'mine.yaml'} (use it with --gpu" in capsys.readouterr().err
    assert cmd_calibrate(_args("-")) == 0
    assert "schema: 2" in capsys.readouterr().out
    assert list(cache.iterdir()) == []


def test_calibrate_refuses_an_unusable_cache_before_measuring(tmp_path, monkeypatch, fake_calibration):
    from tcadvisor.validate.commands import cmd_calibrate

    (tmp_path / "afile").write_text("")
    monkeypatch.setenv("TCADVISOR_CACHE_DIR", str(tmp_path / "afile" / "sub"))
    with pytest.raises(TcAdvisorError, match="cannot create the calibrated-spec cache .*TCADVISOR_CACHE_DIR or pass -o"):
        cmd_calibrate(_args())
    assert fake_calibration == []


def test_the_command_line_says_which_spec_it_uses(tmp_path, run_cli):
    """A fake nvidia-smi on PATH reports the H100; advise then uses the calibration in the cache."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    smi = bin_dir / "nvidia-smi"
    smi.write_text(f"#!{sys.executable}\nprint({H100!r})\n")
    smi.chmod(0o755)
    specs = tmp_path / "cache" / "specs"
    specs.mkdir(parents=True)
    path = write_calibration(specs)
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", "TCADVISOR_CACHE_DIR": str(tmp_path / "cache")}
    r = run_cli("advise", "Box-2D1R", "--fuse", "1", "--dtype", "double", env=env)
    assert r.returncode == 0, r.stderr
    assert f"tcadvisor: using your calibrated spec {path} for {H100} (calibrated 2026-11-23)" in r.stderr
    r = run_cli("advise", "Box-2D1R", "--fuse", "1", "--dtype", "double", "--gpu", "h100", env=env)
    assert r.returncode == 0 and "calibrated spec" not in r.stderr
