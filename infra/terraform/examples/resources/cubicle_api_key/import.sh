# Keys are imported by id; the secret is not known to an import (key stays null).
tofu import cubicle_api_key.ci key_01jb8g7rk4m8yq2v0c9f6x3w5t
