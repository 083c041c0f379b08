terraform {
  required_providers {
    cubicle = {
      source = "registry.opentofu.org/cubicle/cubicle"
    }
  }
}

# endpoint and api_key may also come from CUBICLE_URL and CUBICLE_API_KEY.
provider "cubicle" {
  endpoint = "https://cubicle.example.com"
  api_key  = var.cubicle_api_key
}

variable "cubicle_api_key" {
  type      = string
  sensitive = true
}
