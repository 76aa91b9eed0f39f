"""The prompts tau2 builds for the agent, the user simulator and the NL-assertion judge.

The fixed texts below are protocol data: they are what tau2 (a2c0247) sends to the models, reproduced verbatim
because a different prompt gives different results. Everything that exists as a data file (policy,
user-simulator guidelines) is read from the data directory instead."""
from __future__ import annotations

import textwrap
from functools import lru_cache
from pathlib import Path
from typing import Any

from mua.harness.io.datafiles import load_text

AGENT_INSTRUCTION = (
    "You are a customer service agent that helps the user according to the <policy> provided below.\n"
    "In each turn you can either:\n"
    "- Send a message to the user.\n"
    "- Make a tool call.\n"
    "You cannot do both at the same time.\n"
    "\n"
    "Try to be helpful and always follow the policy. Always make sure you generate valid JSON only."
)
FIRST_AGENT_MESSAGE = "Hi! How can I help you today?"
STOP, TRANSFER, OUT_OF_SCOPE = "###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###"
USER_STOP_MARKERS = (STOP, TRANSFER, OUT_OF_SCOPE)


def agent_system_prompt(policy: str) -> str:
    return f"<instructions>\n{AGENT_INSTRUCTION}\n</instructions>\n<policy>\n{policy}\n</policy>"


def _instructions_text(instructions: Any) -> str:
    # tau2 StructuredUserInstructions.__str__ (a plain string is used as it is)
    if isinstance(instructions, str):
        return instructions
    lines = [f"Domain: {instructions['domain']}",
             f"Reason for call:\n{textwrap.indent(instructions['reason_for_call'], chr(9))}"]
    if instructions.get("known_info") is not None:
        lines.append(f"Known info:\n{textwrap.indent(instructions['known_info'], chr(9))}")
    if instructions.get("unknown_info") is not None:
        lines.append(f"Unknown info:\n{textwrap.indent(instructions['unknown_info'], chr(9))}")
    lines.append(f"Task instructions:\n{textwrap.indent(instructions['task_instructions'], chr(9))}")
    return "\n".join(lines)


def scenario_text(user_scenario: dict) -> str:
    """``str(UserScenario)``: the persona (when set) and the instructions, tab-indented."""
    lines = []
    if user_scenario.get("persona") is not None:
        lines += ["Persona:", textwrap.indent(user_scenario["persona"], "\t")]
    lines += ["Instructions:", textwrap.indent(_instructions_text(user_scenario["instructions"]), "\t")]
    return "\n".join(lines)


def user_system_prompt(data_dir: Path, user_scenario: dict, user_has_tools: bool) -> str:
    name = "simulation_guidelines_tools.md" if user_has_tools else "simulation_guidelines.md"
    return f"{_guidelines(str(data_dir), name)}\n\n<scenario>\n{scenario_text(user_scenario)}\n</scenario>"


@lru_cache(maxsize=16)
def _guidelines(data_dir: str, name: str) -> str:
    """Read once per process (every episode's user prompt starts with it)."""
    guidelines = load_text(Path(data_dir), f"tau2/user_simulator/{name}")
    return guidelines.replace("<PERSONA_GUIDELINES>", "")  # default persona config adds nothing


JUDGE_SYSTEM_PROMPT = """
        TASK
        - You will be given a list of expected outcomes and a conversation that was collected during a test case run.
        - The conversation is between an agent and a customer.
        - Your job is to evaluate whether the agent satisfies each of the expected outcomes.
        - Grade each expected outcome individually.

        FORMAT
        - Your response should be a JSON object with the following fields:
        - `reasoning`: a short explanation for your classification
        - `metExpectation`: `true` if the agent satisfies the expected outcomes, `false` otherwise
        - `expectedOutcome`: repeat the expectation from the input that you are grading
        
        Example response structure:
        {
            "results": [
                {
                    "expectedOutcome": "<one of the expected outcomes from the input>",
                    "reasoning": "<reasoning trace>",
                    "metExpectation": <false or true>,
                }
            ]
        }
        """


def judge_user_prompt(trajectory_text: str, nl_assertions: list[str]) -> str:
    # The assertions are rendered as a Python list literal, as upstream's f-string does.
    return f"""
        conversation:
        {trajectory_text}
        
        expectedOutcomes:
        {nl_assertions!r}
        """
