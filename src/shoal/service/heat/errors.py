"""Refusals with Heat's exception names, so the façade answers with Heat's error `type`."""

from __future__ import annotations

from shoal.service.errors import Conflict, NotFound, ServiceError


class HeatBadRequest(ServiceError):
    code = "heat_bad_request"
    title = "Bad request"
    heat_type = "HTTPBadRequest"


class StackValidationFailed(ServiceError):
    code = "stack_validation_failed"
    title = "Bad request"
    heat_type = "StackValidationFailed"


class InvalidTemplateVersion(ServiceError):
    code = "invalid_template_version"
    heat_type = "InvalidTemplateVersion"


class EntityNotFound(NotFound):
    code = "entity_not_found"
    heat_type = "EntityNotFound"


class StackExists(Conflict):
    code = "stack_exists"
    heat_type = "StackExists"


class ActionInProgress(Conflict):
    code = "action_in_progress"
    heat_type = "ActionInProgress"


class ResourceActionNotSupported(ServiceError):
    code = "resource_action_not_supported"
    heat_type = "ResourceActionNotSupported"


def heat_type_of(exc: ServiceError) -> str | None:
    """The Heat exception name a refusal carries, if it is one of the façade's."""
    found = getattr(exc, "heat_type", None)
    return found if isinstance(found, str) else None
