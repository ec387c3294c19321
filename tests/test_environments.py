"""The environments page: one entry per system + software stack, headings that tell them apart."""

from benchcat.facts import env_key
from benchcat.overview import environments
from benchcat.schema import Record, Software, record_id
from tests.test_scaling_series import record


def test_environment_headings_on_one_system_tell_the_stacks_apart():
    def on(framework: str, version: str | None, **other) -> Record:
        r = record(1, 100.0)
        r = r.model_copy(update={"config": r.config.model_copy(update={"framework": framework}),
                                 "software": Software(framework_version=version, other=other)})  # fmt: skip
        return r.model_copy(update={"id": record_id(r.benchmark, r.config, r.system, r.software)})

    recs = [on("mxnet", "1.9.1"), on("pytorch", "2.13.0", threads="1"), on("pytorch", "2.13.0", threads="2"),
            on("tensorflow", None)]  # fmt: skip
    envs = environments(recs, {r.id: env_key(r) for r in recs})
    assert [e["label"] for e in envs] == [
        "cpu-box · mxnet 1.9.1",
        "cpu-box · pytorch 2.13.0 · threads 1",
        "cpu-box · pytorch 2.13.0 · threads 2",
        "cpu-box · tensorflow",
    ]
    alone = environments(recs[:1], {recs[0].id: env_key(recs[0])})
    assert [e["label"] for e in alone] == ["cpu-box"]  # nothing to tell apart: the system name alone
