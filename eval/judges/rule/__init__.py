"""The rule judge: native checks (rubrics, checkpoints) and the OfficeQA rule, scored without an LLM."""
