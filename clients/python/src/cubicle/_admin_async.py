"""The tenant's administration: settings, API keys, webhooks, the audit log and usage. Most of it
needs an admin key (a member key gets PermissionDeniedError).

Written once for asyncio; its synchronous twin (the same name with _sync) is generated from
this file by scripts/generate.py.
"""

from __future__ import annotations

from typing import Any, AsyncIterator, Optional, Sequence, cast

from ._models import (
    ApiKey,
    ApiKeyCreated,
    ApiKeyRole,
    AuditEvent,
    PoolInsights,
    Tenant,
    Usage,
    Webhook,
    WebhookDelivery,
    WebhookWithSecret,
)
from ._transport_async import AsyncTransport


class AsyncTenantApi:
    def __init__(self, transport: AsyncTransport):
        self._t = transport

    async def get(self) -> Tenant:
        return cast(Tenant, await self._t.request("getTenant"))

    async def update(self, *, embed_origins: Sequence[str]) -> Tenant:
        """update sets the origins allowed to frame the embed page."""
        body = {"embed_origins": list(embed_origins)}
        return cast(Tenant, await self._t.request("updateTenant", body=body))


class AsyncApiKeys:
    def __init__(self, transport: AsyncTransport):
        self._t = transport

    async def list(self, *, limit: Optional[int] = None) -> AsyncIterator[ApiKey]:
        async for key in self._t.pages("listApiKeys", query={"limit": limit}):
            yield key

    async def create(self, name: str, role: ApiKeyRole) -> ApiKeyCreated:
        """create answers the new key's secret once; it is stored hashed."""
        body = {"name": name, "role": role}
        return cast(ApiKeyCreated, await self._t.request("createApiKey", body=body))

    async def revoke(self, key_id: str) -> None:
        await self._t.request("revokeApiKey", path={"id": key_id})


class AsyncWebhooks:
    def __init__(self, transport: AsyncTransport):
        self._t = transport

    async def create(self, url: str, events: Sequence[str], **options: Any) -> WebhookWithSecret:
        """create answers the signing secret (whsec_…) once; `rotate_secret` makes a new one."""
        body = {"url": url, "events": list(events), **options}
        return cast(WebhookWithSecret, await self._t.request("createWebhook", body=body))

    async def list(self, *, limit: Optional[int] = None) -> AsyncIterator[Webhook]:
        async for hook in self._t.pages("listWebhooks", query={"limit": limit}):
            yield hook

    async def get(self, webhook_id: str) -> Webhook:
        return cast(Webhook, await self._t.request("getWebhook", path={"id": webhook_id}))

    async def update(self, webhook_id: str, **changes: Any) -> Webhook:
        return cast(Webhook, await self._t.request("updateWebhook", path={"id": webhook_id}, body=changes))

    async def delete(self, webhook_id: str) -> None:
        await self._t.request("deleteWebhook", path={"id": webhook_id})

    async def rotate_secret(self, webhook_id: str) -> WebhookWithSecret:
        return cast(WebhookWithSecret, await self._t.request("rotateWebhookSecret", path={"id": webhook_id}))

    async def deliveries(
        self, webhook_id: str, *, status: Optional[str] = None, limit: Optional[int] = None
    ) -> AsyncIterator[WebhookDelivery]:
        query = {"status": status, "limit": limit}
        async for delivery in self._t.pages("listWebhookDeliveries", path={"id": webhook_id}, query=query):
            yield delivery

    async def retry_delivery(self, webhook_id: str, delivery_id: str) -> WebhookDelivery:
        """retry_delivery queues a pending or failed delivery's next attempt now."""
        path = {"id": webhook_id, "delivery_id": delivery_id}
        return cast(WebhookDelivery, await self._t.request("retryWebhookDelivery", path=path))


class AsyncAuditEvents:
    def __init__(self, transport: AsyncTransport):
        self._t = transport

    async def list(self, *, limit: Optional[int] = None) -> AsyncIterator[AuditEvent]:
        async for event in self._t.pages("listAuditEvents", query={"limit": limit}):
            yield event


class AsyncUsageApi:
    def __init__(self, transport: AsyncTransport):
        self._t = transport

    async def get(self, *, from_: str, to: str, group_by: Optional[str] = None) -> Usage:
        """get: claim, warm and run time between two ISO instants (`from_`: `from` is a keyword)."""
        query = {"from": from_, "to": to, "group_by": group_by}
        return cast(Usage, await self._t.request("getUsage", query=query))

    async def pool_insights(self, name: str, *, window: Optional[str] = None) -> PoolInsights:
        query = {"window": window}
        return cast(PoolInsights, await self._t.request("getPoolInsights", path={"name": name}, query=query))
