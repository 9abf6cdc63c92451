module example.com/capi-provider-example

go 1.26
