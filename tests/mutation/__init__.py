"""The mutation run (docs/mutation.md): not collected by the default test run except its own tests."""
