"""Test helpers of the bridge's own suites: the scripted fake CLI, record/replay, the real
CLI offline, process-table checks. The fake Messages API is :mod:`bridge.fakes`."""
