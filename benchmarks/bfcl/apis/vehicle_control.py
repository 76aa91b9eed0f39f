"""VehicleControlAPI (upstream vehicle_control.py): engine, doors, climate, brakes, cruise control, navigation.

Note the scenario keys that differ from attribute names (``engineState`` -> engine_state, ``parkingBrakeForce``
-> _parkingBrakeForce, ...) and that ``remainingUnlockedDoors`` is always recomputed from ``doorStatus``.
"""
from __future__ import annotations

import copy
import random

from .base import ApiSuite, Extensions, pick

MAX_FUEL_LEVEL = 50
MIN_FUEL_LEVEL = 0.0
MILE_PER_GALLON = 20.0
_DEFAULT_SEED = 141053
# attribute -> (scenario key, default), in upstream's assignment order
_FIELDS = [
    ("fuelLevel", "fuelLevel", 0.0), ("batteryVoltage", "batteryVoltage", 12.6),
    ("engine_state", "engineState", "stopped"), ("remainingUnlockedDoors", "remainingUnlockedDoors", 4),
    ("doorStatus", "doorStatus", {"driver": "unlocked", "passenger": "unlocked", "rear_left": "unlocked",
                                  "rear_right": "unlocked"}),
    ("acTemperature", "acTemperature", 25.0), ("fanSpeed", "fanSpeed", 50), ("acMode", "acMode", "auto"),
    ("humidityLevel", "humidityLevel", 50.0), ("headLightStatus", "headLightStatus", "off"),
    ("parkingBrakeStatus", "parkingBrakeStatus", "released"), ("_parkingBrakeForce", "parkingBrakeForce", 0.0),
    ("_slopeAngle", "slopeAngle", 0.0), ("brakePedalStatus", "brakePedalStatus", "released"),
    ("_brakePedalForce", "brakePedalForce", 0.0), ("distanceToNextVehicle", "distanceToNextVehicle", 50.0),
    ("cruiseStatus", "cruiseStatus", "inactive"), ("destination", "destination", "None"),
    ("frontLeftTirePressure", "frontLeftTirePressure", 32.0),
    ("frontRightTirePressure", "frontRightTirePressure", 32.0),
    ("rearLeftTirePressure", "rearLeftTirePressure", 30.0), ("rearRightTirePressure", "rearRightTirePressure", 30.0),
]
_DISTANCES = {frozenset(p): d for p, d in [
    (("83214", "74532"), 750.0), (("56108", "62947"), 320.0), (("71354", "83462"), 450.0),
    (("47329", "52013"), 290.0), (("69238", "51479"), 630.0), (("94016", "83214"), 980.0),
    (("94016", "94704"), 600.0), (("94704", "08540"), 2550.0), (("94016", "08540"), 1950.0),
    (("62947", "47329"), 1053.0), (("94016", "62947"), 780.0), (("74532", "94016"), 880.0)]}
_ZIPCODES = {"Rivermist": "83214", "Stonebrook": "74532", "Maplecrest": "56108", "Silverpine": "62947",
             "Shadowridge": "71354", "Sunset Valley": "83462", "Oakendale": "47329", "Willowbend": "52013",
             "Crescent Hollow": "69238", "Autumnville": "51479", "San Francisco": "94016"}


class VehicleControlAPI(ApiSuite):
    def _setup(self, scenario, long_context: bool, extensions: Extensions) -> None:
        self._random = random.Random(scenario.get("random_seed", _DEFAULT_SEED))
        for attr, key, default in _FIELDS:
            setattr(self, attr, pick(scenario, key, default))
        self.remainingUnlockedDoors = 4 - len([d for d in self.doorStatus if self.doorStatus[d] == "locked"])
        self.long_context = long_context
        self._ext = extensions

    def startEngine(self, ignitionMode: str):
        if ignitionMode == "STOP":
            self.engine_state = "stopped"
        if self.remainingUnlockedDoors > 0:
            unlocked = [door for door, status in self.doorStatus.items() if status == "unlocked"]
            return {"error": "All doors must be locked before starting the engine. Here are the unlocked doors: "
                             + ", ".join(unlocked)}
        if self.brakePedalStatus != "pressed":
            return {"error": "Brake pedal needs to be pressed when starting the engine."}
        if self._brakePedalForce != 1000.0:
            return {"error": "Must press the brake fully before starting the engine."}
        if self.fuelLevel < MIN_FUEL_LEVEL:
            return {"error": "Fuel tank is empty."}
        if ignitionMode != "START":
            return {"error": "Invalid ignition mode."}
        self.engine_state = "running"
        return {"engineState": self.engine_state, "fuelLevel": self.fuelLevel, "batteryVoltage": self.batteryVoltage}

    def fillFuelTank(self, fuelAmount: float):
        if fuelAmount < 0:
            return {"error": "Fuel amount cannot be negative."}
        if self.fuelLevel + fuelAmount > MAX_FUEL_LEVEL:
            return {"error": "Cannot fill gas above the tank capacity."}
        if self.fuelLevel + fuelAmount < MIN_FUEL_LEVEL:
            return {"error": "Fuel tank is empty. Min fuel level is 0 gallons."}
        self.fuelLevel += fuelAmount
        return {"fuelLevel": self.fuelLevel}

    def lockDoors(self, unlock: bool, door: list):
        target = "unlocked" if unlock else "locked"
        for d in door:
            if self.doorStatus[d] == target:
                continue
            self.doorStatus[d] = target
            self.remainingUnlockedDoors += 1 if unlock else -1
        return {"lockStatus": target, "remainingUnlockedDoors": self.remainingUnlockedDoors}

    def adjustClimateControl(self, temperature: float, unit: str = "celsius", fanSpeed: int = 50,
                             mode: str = "auto"):
        if not 0 <= fanSpeed <= 100:
            return {"error": "Fan speed must be between 0 and 100."}
        self.acTemperature = temperature
        if unit == "fahrenheit":
            self.acTemperature = (temperature - 32) * 5 / 9
        self.fanSpeed = fanSpeed
        self.acMode = mode
        return {"currentACTemperature": temperature, "climateMode": mode, "humidityLevel": self.humidityLevel}

    def get_outside_temperature_from_google(self):
        reading = self._random.uniform(-10.0, 40.0)
        if self.long_context:
            report = copy.copy(self._ext.view("LONG_WEATHER_EXTENSION"))
            report["outsideTemperature"] = reading
            return report
        return {"outsideTemperature": reading}

    def get_outside_temperature_from_weather_com(self):
        return {"error": 404}

    def setHeadlights(self, mode: str):
        if mode not in ["on", "off", "auto"]:
            return {"error": "Invalid headlight mode."}
        self.headLightStatus = "on" if mode == "on" else "off"
        return {"headlightStatus": self.headLightStatus}

    def displayCarStatus(self, option: str):
        status: dict = {}
        if self.long_context:
            status["metadata"] = self._ext.view("CAR_STATUS_METADATA_EXTENSION")
        views = {
            "fuel": lambda: {"fuelLevel": self.fuelLevel},
            "battery": lambda: {"batteryVoltage": self.batteryVoltage},
            "doors": lambda: {"doorStatus": self.doorStatus},
            "climate": lambda: {"currentACTemperature": self.acTemperature, "fanSpeed": self.fanSpeed,
                                "climateMode": self.acMode, "humidityLevel": self.humidityLevel},
            "headlights": lambda: {"headlightStatus": self.headLightStatus},
            "parkingBrake": lambda: {"parkingBrakeStatus": self.parkingBrakeStatus,
                                     "parkingBrakeForce": self._parkingBrakeForce, "slopeAngle": self._slopeAngle},
            "brakePedal": lambda: {"brakePedalStatus": self.brakePedalStatus,
                                   "brakePedalForce": self._brakePedalForce},
            "engine": lambda: {"engineState": self.engine_state},
        }
        status.update(views[option]() if isinstance(option, str) and option in views else {"error": "Invalid option"})
        return status

    def activateParkingBrake(self, mode: str):
        if mode not in ["engage", "release"]:
            return {"error": "Invalid mode"}
        engage = mode == "engage"
        self.parkingBrakeStatus = "engaged" if engage else "released"
        self._parkingBrakeForce = 500.0 if engage else 0.0
        self._slopeAngle = 10.0
        out = {"parkingBrakeStatus": self.parkingBrakeStatus, "_parkingBrakeForce": self._parkingBrakeForce,
               "_slopeAngle": 10.0}
        if self.long_context:
            return {"parkingBrakeInstruction": self._ext.view("PARKING_BRAKE_INSTRUCTION"), **out}
        return out

    def pressBrakePedal(self, pedalPosition: float):
        if not 0 <= pedalPosition <= 1:
            return {"error": "Pedal position must be between 0 and 1."}
        if pedalPosition == 0:
            self.brakePedalStatus = "released"
            self._brakePedalForce = 0.0
            return {"brakePedalStatus": "released", "brakePedalForce": 0.0}
        force = pedalPosition * 1000
        self.brakePedalStatus = "pressed"
        self._brakePedalForce = force
        return {"brakePedalStatus": "pressed", "brakePedalForce": float(force)}

    def releaseBrakePedal(self):
        self.brakePedalStatus = "released"
        self._brakePedalForce = 0.0
        return {"brakePedalStatus": "released", "brakePedalForce": 0.0}

    def setCruiseControl(self, speed: float, activate: bool, distanceToNextVehicle: float):
        distanceToNextVehicle = float(distanceToNextVehicle)
        speed = float(speed)
        if self.engine_state == "stopped":
            return {"error": "Start the engine before activating the cruise control."}
        self.distanceToNextVehicle = distanceToNextVehicle
        if activate:
            if speed < 0 or speed > 120 or speed % 5 != 0:
                return {"error": "Invalid speed"}
            self.cruiseStatus = "active"
        else:
            self.cruiseStatus = "inactive"
        return {"cruiseStatus": self.cruiseStatus, "currentSpeed": speed,
                "distanceToNextVehicle": distanceToNextVehicle}

    def get_current_speed(self):
        return {"currentSpeed": self._random.uniform(0.0, 120.0)}

    def display_log(self, messages: list):
        return {"log": messages}

    def estimate_drive_feasibility_by_mileage(self, distance: float):
        return {"canDrive": not self.fuelLevel * MILE_PER_GALLON < distance}

    def liter_to_gallon(self, liter: float):
        return {"gallon": liter * 0.264172}

    def gallon_to_liter(self, gallon: float):
        return {"liter": gallon * 3.78541}

    def estimate_distance(self, cityA: str, cityB: str):
        known = None
        if isinstance(cityA, str) and isinstance(cityB, str) and cityA != cityB:
            known = _DISTANCES.get(frozenset((cityA, cityB)))
        result = {"distance": known} if known is not None else {"error": "distance not found in database."}
        if self.long_context:
            result["intermediaryCities"] = self._ext.view("INTERMEDIARY_CITIES")
        return result

    def get_zipcode_based_on_city(self, city: str):
        return {"zipcode": _ZIPCODES.get(city, "00000") if isinstance(city, str) else "00000"}

    def set_navigation(self, destination: str):
        self.destination = destination
        return {"status": "Navigating to " + destination}

    def check_tire_pressure(self):
        tires = {"frontLeftTirePressure": self.frontLeftTirePressure,
                 "frontRightTirePressure": self.frontRightTirePressure,
                 "rearLeftTirePressure": self.rearLeftTirePressure,
                 "rearRightTirePressure": self.rearRightTirePressure}
        healthy = 30 <= sum(tires.values()) / 4 <= 35
        car_info = self._ext.view("CAR_STATUS_METADATA_EXTENSION") if self.long_context else {}
        return {**tires, "healthy_tire_pressure": healthy, "car_info": car_info}

    def find_nearest_tire_shop(self):
        return {"shopLocation": "456 Oakwood Avenue, Rivermist, 83214"}
