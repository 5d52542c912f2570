"""base/log.py Stages: the main job's step headers."""


def test_stage_headers_say_which_step_of_how_many_and_the_last_time(capsys):
    from base.log import Stages
    st = Stages("make", ["regen", "apply", "boot"], {"apply": 41.0})
    st.start("regen")
    st.start("apply")
    times = st.done()
    err = capsys.readouterr().err.splitlines()
    assert err == ["==== make: step 1 of 3: regen ====",
                   "==== make: step 2 of 3: apply (last run: 41s) ===="]
    assert set(times) == {"regen", "apply"}


def test_one_duration_format():
    from base.log import duration
    assert duration(None) == "?"
    assert duration(0) == "0s" and duration(42.4) == "42s" and duration(4.25, 1) == "4.2s"
    assert duration(59.4) == "59s" and duration(59.6) == "1m00s" and duration(59.96, 1) == "1m00s"
    assert duration(60) == "1m00s" and duration(187.4) == "3m07s" and duration(119.6) == "2m00s"
    assert duration(3600) == "60m00s"
