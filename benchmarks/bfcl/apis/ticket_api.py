"""TicketAPI (upstream ticket_api.py): a support-ticket queue."""
from __future__ import annotations

from typing import Optional

from .base import ApiSuite, pick

_DEFAULTS = {"ticket_queue": [], "ticket_counter": 1, "current_user": None}


class TicketAPI(ApiSuite):
    current_user: Optional[str]  # set from _DEFAULTS or the scenario in _setup

    def _setup(self, scenario, long_context, extensions) -> None:
        for key in _DEFAULTS:
            setattr(self, key, pick(scenario, key, _DEFAULTS[key]))

    def _find(self, ticket_id):
        return next((t for t in self.ticket_queue if t["id"] == ticket_id), None)

    def create_ticket(self, title: str, description: str = "", priority: int = 1):
        if not self.current_user:
            return {"error": "User not authenticated. Please log in to create a ticket."}
        if priority < 1 or priority > 5:
            return {"error": "Invalid priority. Priority must be between 1 and 5."}
        ticket = {"id": self.ticket_counter, "title": title, "description": description, "status": "Open",
                  "priority": priority, "created_by": self.current_user}
        self.ticket_queue.append(ticket)
        self.ticket_counter += 1
        return ticket

    def get_ticket(self, ticket_id: int):
        ticket = self._find(ticket_id)
        return ticket if ticket else {"error": f"Ticket with ID {ticket_id} not found."}

    def close_ticket(self, ticket_id: int):
        ticket = self._find(ticket_id)
        if not ticket:
            return {"error": f"Ticket with ID {ticket_id} not found."}
        if ticket["status"] == "Closed":
            return {"error": f"Ticket with ID {ticket_id} is already closed."}
        ticket["status"] = "Closed"
        return {"status": f"Ticket {ticket_id} has been closed successfully."}

    def resolve_ticket(self, ticket_id: int, resolution: str):
        ticket = self._find(ticket_id)
        if not ticket:
            return {"error": f"Ticket with ID {ticket_id} not found."}
        if ticket["status"] == "Resolved":
            return {"error": f"Ticket with ID {ticket_id} is already resolved."}
        ticket["status"] = "Resolved"
        ticket["resolution"] = resolution
        return {"status": f"Ticket {ticket_id} has been resolved successfully."}

    def edit_ticket(self, ticket_id: int, updates: dict):
        ticket = self._find(ticket_id)
        if not ticket:
            return {"error": f"Ticket with ID {ticket_id} not found."}
        unknown = set(updates.keys()) - {"title", "description", "status", "priority"}
        if unknown:
            # upstream joins a set here; sorted gives one fixed order
            return {"error": f"Invalid fields for update: {', '.join(sorted(unknown, key=str))}"}
        for key, value in updates.items():
            if value is not None:
                ticket[key] = value
        return {"status": f"Ticket {ticket_id} has been updated successfully."}

    def ticket_login(self, username: str, password: str):
        if username and password:
            self.current_user = username
            return {"success": True}
        return {"success": False}

    def ticket_get_login_status(self):
        return {"username": bool(self.current_user)}

    def logout(self):
        if self.current_user:
            self.current_user = None
            return {"success": True}
        return {"success": False}

    def get_user_tickets(self, status: Optional[str] = None):
        if not self.current_user:
            return [{"error": "User not authenticated. Please log in to view tickets."}]
        mine = [t for t in self.ticket_queue if t["created_by"] == self.current_user]
        if status:
            mine = [t for t in mine if t["status"].lower() == status.lower()]
        return mine
