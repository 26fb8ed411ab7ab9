"""A user's first calls through the Python client openapi-python-client generates from the live document (default
settings): a new contact is ContactCreate(first_name=...), one model. Run by test/integration/generated-clients.test.ts
against the real server, with the generated package `service_client` on PYTHONPATH."""

import os
import uuid

import httpx
from service_client import AuthenticatedClient
from service_client.api.crm import create_contact, get_contact, list_contacts
from service_client.models import Contact, ContactCreate, Error, ValidationError

client = AuthenticatedClient(base_url=os.environ["BASE_URL"], token=os.environ["TOKEN"], timeout=httpx.Timeout(20.0))


def check(condition: bool, what: str) -> None:
    if not condition:
        raise AssertionError(what)


created = create_contact.sync_detailed(client=client, body=ContactCreate(first_name="Ada"))
check(created.status_code == 200 and isinstance(created.parsed, Contact), f"create contact: {created.status_code} {created.content!r}")
ada = created.parsed
check(ada.first_name == "Ada" and ada.last_name is None, f"created contact: {ada}")
print("create contact: 200")

read = get_contact.sync(client=client, contact_id=ada.id)
check(isinstance(read, Contact) and read.id == ada.id and read.first_name == "Ada", f"read contact: {read}")
print("read contact: 200")

others = [ContactCreate(last_name="Lovelace"), ContactCreate(email="grace@example.com")]
ids = {ada.id} | {create_contact.sync(client=client, body=body).id for body in others}
seen: list[uuid.UUID] = []
offset = 0
while True:  # pages of two until one is shorter (three contacts: two pages)
    page = list_contacts.sync_detailed(client=client, limit=2, offset=offset)
    check(page.status_code == 200 and isinstance(page.parsed, list), f"list contacts: {page.status_code} {page.content!r}")
    check(page.headers.get("x-total-count") == str(len(ids)), f"X-Total-Count: {page.headers.get('x-total-count')}")
    seen += [contact.id for contact in page.parsed]
    if len(page.parsed) < 2:
        break
    offset += 2
check(sorted(seen) == sorted(ids), f"paged ids {seen}, made {ids}")
print(f"page contacts: {offset // 2 + 1} pages")

missing = get_contact.sync_detailed(client=client, contact_id=uuid.uuid4())
check(missing.status_code == 404 and isinstance(missing.parsed, Error), f"missing contact: {missing.status_code} {missing.content!r}")
check(isinstance(missing.parsed.detail, str), f"404 detail: {missing.parsed}")
print("missing contact: 404")

refused = create_contact.sync_detailed(client=client, body=ContactCreate(title="CEO"))
check(refused.status_code == 422 and isinstance(refused.parsed, ValidationError), f"nameless contact: {refused.status_code} {refused.content!r}")
item = refused.parsed.detail[0]
check(item.loc == ["body"] and "first_name" in item.msg, f"422 item: {item}")
print("nameless contact: 422")
print("flow complete")
