"""tau2 telecom: technical support where the agent and the user share control (carrier records vs the user's phone)."""
from .environment import TelecomDomain

__all__ = ["TelecomDomain"]
