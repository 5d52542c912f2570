"""base/log.py Stages: the main job's step headers."""


def test_stage_headers_say_which_step_of_how_many_and_the_last_time(capsys):
    from base.log import Stages
    st = Stages("make", ["regen", "apply", "boot"], {"apply": 41.0})
    st.start("regen")
    st.start("apply")
    times = st.done()
    err = capsys.readouterr().err.splitlines()
    assert err == ["==== make: step 1 of 3: regen ====",
                   "==== make: step 2 of 3: apply (last run: 0m41s) ===="]
    assert set(times) == {"regen", "apply"}
