"""Record identity: the same configuration updates its record; another software stack is another record."""

from benchcat.merge import build_records, observation_dict
from benchcat.schema import Benchmark, Config, Provenance, Run, Software, System
from collectors.base import Observation


def obs(run_id, value, **software):
    return observation_dict(
        Observation(
            benchmark=Benchmark(model="bert-base", seq_len=128),
            config=Config(framework="mindspore", precision="fp16", batch_size=32, flags={"b": "2", "a": "1"}),
            system=System(accelerator="Ascend 910", accelerator_count=8),
            software=Software(**software),
            run=Run(
                run_id=run_id,
                values={"throughput": value},
                source=Provenance(
                    root="logs", path=f"r{run_id}.log", sha256="0" * 64, collector="t", collector_version=1
                ),
            ),
        )
    )


def test_repeats_of_one_stack_share_a_record():
    records = build_records([obs("1", 100.0, framework_version="1.7"), obs("2", 110.0, framework_version="1.7")])
    (rec,) = records.values()
    assert [r.run_id for r in rec.runs] == ["1", "2"] and rec.metrics["throughput"].median == 105.0


def test_another_framework_version_or_cuda_is_another_record():
    records = build_records(
        [
            obs("1", 100.0, framework_version="1.3", cuda="10.1"),
            obs("1", 140.0, framework_version="1.7", cuda="10.1"),
            obs("1", 150.0, framework_version="1.7", cuda="11.1"),
        ]
    )
    assert len(records) == 3
    assert sorted(r.metrics["throughput"].median for r in records.values()) == [100.0, 140.0, 150.0]


def test_ids_are_stable_and_independent_of_dict_order():
    a = obs("1", 1.0, framework_version="1.7", other={"x": "1", "y": "2"})
    b = obs("1", 1.0, framework_version="1.7", other={"y": "2", "x": "1"})
    assert a["id"] == b["id"] and a["id"].startswith("bert-base-mindspore-1n1g-")
    # Pinned: an id must not change between releases unless the schema does (catalogs key on it).
    assert a["id"] == "bert-base-mindspore-1n1g-19a574fe4a"
