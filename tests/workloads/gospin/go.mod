module example.com/gospin

go 1.16
