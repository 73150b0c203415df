"""The "irlab" Voila template: Voila's "lab" template without CDN stylesheets, installable as
Voila's default."""


def test_voila_template_installs_without_cdn(tmp_path):
    from irlab.widgets.assets import install_voila_template

    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "voila.json").write_text('{"Voila": {"port": 1}}')
    target = install_voila_template(tmp_path / "data", tmp_path / "config")
    assert (target / "conf.json").exists() and (target / "index.html.j2").exists()
    settings = (tmp_path / "config" / "voila.json").read_text()
    assert '"template": "irlab"' in settings and '"port": 1' in settings
