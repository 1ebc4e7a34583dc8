"""The Qwen-family critics' shared machinery: the settings they share (`inputs.py`, gin `rewards.qwen_inputs`),
checkpoint loading and chat texts, video preprocessing as Qwen's processors and qwen-vl-utils do it, prompt layouts,
answer-token scoring (per check or one joint prompt, with gradient maps), teacher-forced digit scores, and the
answer-likelihood critic `rewards.qwen_vl`."""
