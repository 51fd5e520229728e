module sirtommy

go 1.26.8
